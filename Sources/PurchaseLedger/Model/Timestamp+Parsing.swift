import Postgres

extension Timestamp {
    /// Parses an ISO-8601 / RFC 3339 date-time with a zone:
    /// `YYYY-MM-DDTHH:MM:SS[.fraction]ZONE`.
    ///
    /// - `T` may also be `t` or a space;
    /// - the fraction has 1 to 9 digits and is truncated to microseconds;
    /// - `ZONE` is required: `Z`, `z`, `±HH:MM`, `±HHMM` or `±HH`
    ///   (hours 00-23, minutes 00-59);
    /// - years 0001-9999, months 01-12, days within the month (leap years
    ///   included), hours 00-23, minutes and seconds 00-59 (no leap second);
    /// - the resulting instant must lie in ``supportedRange``.
    ///
    /// Returns `nil` for anything else, including surrounding whitespace.
    public static func parseISO8601(_ text: String) -> Timestamp? {
        if let result = text.utf8.withContiguousStorageIfAvailable({ parse($0) }) {
            return result
        }
        return Array(text.utf8).withUnsafeBufferPointer { parse($0) }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        var scanner = TextScanner(bytes: bytes)
        guard let year = scanner.digits(4), scanner.skip(UInt8(ascii: "-")),
              let month = scanner.digits(2), scanner.skip(UInt8(ascii: "-")),
              let day = scanner.digits(2),
              let separator = scanner.next(), Self.dateTimeSeparators.contains(separator),
              let hour = scanner.digits(2), scanner.skip(UInt8(ascii: ":")),
              let minute = scanner.digits(2), scanner.skip(UInt8(ascii: ":")),
              let second = scanner.digits(2)
        else { return nil }

        var fraction: Int64 = 0
        if scanner.skip(UInt8(ascii: ".")) {
            guard let micros = scanner.fractionMicroseconds(maxDigits: 9) else { return nil }
            fraction = micros
        }
        guard let offsetSeconds = scanner.zoneOffsetSeconds(), scanner.isAtEnd else { return nil }

        guard (1...9999).contains(year), (1...12).contains(month),
              (1...CivilDate.daysInMonth(month, year: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }

        let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        let timestamp = Timestamp(microseconds: seconds * microsecondsPerSecond + fraction)
        return supportedRange.contains(timestamp) ? timestamp : nil
    }

    /// `T`, `t` or a space between the date and the time.
    private static let dateTimeSeparators: [UInt8] = [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")]

    /// A cursor over ASCII text; every method returns `nil` or `false` on a mismatch.
    private struct TextScanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        mutating func next() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        func peek() -> UInt8? {
            index < bytes.count ? bytes[index] : nil
        }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            index += 1
            return true
        }

        /// Exactly `count` decimal digits.
        mutating func digits(_ count: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<count {
                guard let byte = peek(), let digit = Self.digitValue(byte) else { return nil }
                value = value * 10 + digit
                index += 1
            }
            return value
        }

        /// 1 to `maxDigits` digits after the point, truncated to microseconds.
        mutating func fractionMicroseconds(maxDigits: Int) -> Int64? {
            var micros: Int64 = 0
            var count = 0
            while let byte = peek(), let digit = Self.digitValue(byte) {
                count += 1
                guard count <= maxDigits else { return nil }
                if count <= 6 { micros = micros * 10 + digit }
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<max(count, 6) { micros *= 10 }
            return micros
        }

        /// The zone's offset east of UTC in seconds.
        mutating func zoneOffsetSeconds() -> Int64? {
            guard let first = next() else { return nil }
            if first == UInt8(ascii: "Z") || first == UInt8(ascii: "z") {
                return 0
            }
            let sign: Int64
            switch first {
            case UInt8(ascii: "+"): sign = 1
            case UInt8(ascii: "-"): sign = -1
            default: return nil
            }
            guard let hours = digits(2), hours <= 23 else { return nil }
            var minutes: Int64 = 0
            if skip(UInt8(ascii: ":")) || !isAtEnd {  // ±HH:MM or ±HHMM
                guard let value = digits(2), value <= 59 else { return nil }
                minutes = value
            }
            return sign * (hours * 3600 + minutes * 60)
        }

        static func digitValue(_ byte: UInt8) -> Int64? {
            let digit = byte &- UInt8(ascii: "0")
            return digit < 10 ? Int64(digit) : nil
        }
    }
}
