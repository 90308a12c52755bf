/// `timestamptz` text, to and from microseconds since the Unix epoch: the package's one
/// implementation of PostgreSQL's timestamp text, days counted by `CivilDate`.
package enum PostgresTimestamp {
    static let microsPerSecond: Int64 = 1_000_000
    static let microsPerDay: Int64 = 86_400 * microsPerSecond
    /// About 285,000 years either side of 2001 (PostgreSQL's timestamps end in the year 294276):
    /// the range `Date.unixMicroseconds` converts without clamping.
    static let limitMicros = 9.0e18

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00`, with ` BC` for years before 1: the text PostgreSQL reads
    /// as this `timestamptz` exactly.
    package static func text(microseconds micros: Int64) -> String {
        let (days, time) = CivilDate.floorDivide(micros, microsPerDay)
        let date = CivilDate(daysSinceEpoch: days)
        let seconds = time / microsPerSecond
        var text = "\(pad(date.year > 0 ? date.year : 1 - date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2)) "
        text += "\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))"
        text += ".\(pad(time % microsPerSecond, 6))+00"
        return date.year > 0 ? text : text + " BC"
    }

    /// Parses `Y…Y-MM-DD[ HH:MM:SS[.f…]][±HH[:MM[:SS]]][ BC]` (`timestamptz`, `timestamp` read as
    /// UTC, `date`) into microseconds since the Unix epoch; nil for anything else (`infinity`).
    package static func microseconds(parsing bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var scanner = ByteScanner(bytes: bytes)
        guard var year = scanner.number(minDigits: 4, maxDigits: 7), scanner.skip("-"),
            let month = scanner.number(digits: 2), (1...12).contains(month), scanner.skip("-"),
            let day = scanner.number(digits: 2), (1...31).contains(day)
        else { return nil }
        var time: Int64 = 0
        if scanner.skip(" ") || scanner.skip("T") {
            guard let hour = scanner.number(digits: 2), hour <= 24, scanner.skip(":"),
                let minute = scanner.number(digits: 2), minute < 60, scanner.skip(":"),
                let second = scanner.number(digits: 2), second < 61
            else { return nil }
            time = ((hour * 60 + minute) * 60 + second) * microsPerSecond
            if scanner.skip(".") {
                guard let fraction = scanner.microseconds() else { return nil }
                time += fraction
            }
            if let sign = scanner.sign() {
                guard let hours = scanner.number(digits: 2) else { return nil }
                var offset = hours * 3600
                if scanner.skip(":") {
                    guard let minutes = scanner.number(digits: 2) else { return nil }
                    offset += minutes * 60
                    if scanner.skip(":") {
                        guard let seconds = scanner.number(digits: 2) else { return nil }
                        offset += seconds
                    }
                }
                time -= sign * offset * microsPerSecond
            }
        }
        if scanner.skip(" BC") { year = 1 - year }
        guard scanner.isAtEnd else { return nil }
        return CivilDate(year: year, month: month, day: day).daysSinceEpoch * microsPerDay + time
    }

    /// `microseconds(parsing:)` of a string.
    package static func microseconds(parsing text: String) -> Int64? {
        Array(text.utf8).withUnsafeBufferPointer { microseconds(parsing: $0) }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// A cursor over ASCII bytes for the timestamp parser.
private struct ByteScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    var isAtEnd: Bool { index == bytes.count }

    mutating func skip(_ literal: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - index >= expected.count,
            zip(bytes[index...], expected).allSatisfy({ $0 == $1 })
        else { return false }
        index += expected.count
        return true
    }

    mutating func sign() -> Int64? {
        if skip("+") { return 1 }
        if skip("-") { return -1 }
        return nil
    }

    mutating func number(digits: Int) -> Int64? { number(minDigits: digits, maxDigits: digits) }

    mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        var count = 0
        while count < maxDigits, index < bytes.count, let digit = Self.digit(bytes[index]) {
            value = value * 10 + digit
            index += 1
            count += 1
        }
        return count >= minDigits ? value : nil
    }

    /// Fraction digits as microseconds (digits beyond the sixth are ignored).
    mutating func microseconds() -> Int64? {
        var value: Int64 = 0
        var count = 0
        while index < bytes.count, let digit = Self.digit(bytes[index]) {
            if count < 6 { value = value * 10 + digit }
            index += 1
            count += 1
        }
        guard count > 0 else { return nil }
        for _ in count..<max(count, 6) { value *= 10 }
        return value
    }

    private static func digit(_ byte: UInt8) -> Int64? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int64(byte - UInt8(ascii: "0")) : nil
    }
}
