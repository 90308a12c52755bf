import Foundation

/// `Date` is `timestamptz`: bound as `YYYY-MM-DD HH:MM:SS.ffffff+00`, read from ISO DateStyle output.
extension Date: PostgresEncodable, PostgresDecodable {
    /// Binds the instant in UTC, as the microsecond it stands for (`unixMicroseconds`).
    public func postgresValue() throws -> PostgresValue {
        guard let text = PostgresTimestamp.format(self) else {
            throw PostgresError.encoding("a Date is outside the range PostgreSQL timestamps can hold")
        }
        return .text(text)
    }

    /// Parses `timestamptz` (`2024-05-01 12:30:00.25+00`), `timestamp` (read as UTC) and `date` output;
    /// `infinity` and `-infinity` are decoding errors.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        guard let date = PostgresTimestamp.parse(postgresText) else {
            throw PostgresError.decoding(
                column: column, type: type, as: Date.self, "expected an ISO timestamp (infinity has no Date)")
        }
        self = date
    }
}

/// Civil-calendar arithmetic on microseconds since the Unix epoch, without `DateFormatter` or `Calendar`.
enum PostgresTimestamp {
    static let microsPerSecond: Int64 = 1_000_000
    static let microsPerDay: Int64 = 86_400 * microsPerSecond
    /// About 285,000 years either side of 2001 (PostgreSQL's timestamps end in the year 294276):
    /// the range `Date.unixMicroseconds` converts without clamping.
    static let limitMicros = 9.0e18

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00` (with ` BC` for years before 1); nil for NaN or absurd dates.
    static func format(_ date: Date) -> String? {
        let sinceReference = date.timeIntervalSinceReferenceDate * 1_000_000
        guard sinceReference.isFinite, abs(sinceReference) < limitMicros else { return nil }
        let micros = date.unixMicroseconds
        let days = floorDivide(micros, microsPerDay)
        let time = micros - days * microsPerDay
        let (year, month, day) = civil(fromDays: days)
        let seconds = time / microsPerSecond
        var text = "\(pad(year > 0 ? year : 1 - year, 4))-\(pad(month, 2))-\(pad(day, 2)) "
        text += "\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))"
        text += ".\(pad(time % microsPerSecond, 6))+00"
        return year > 0 ? text : text + " BC"
    }

    /// Parses `Y…Y-MM-DD[ HH:MM:SS[.f…]][±HH[:MM[:SS]]][ BC]`.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
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
        return Date(unixMicroseconds: days(fromCivil: year, month, day) * microsPerDay + time)
    }

    /// Howard Hinnant's `civil_from_days`: proleptic Gregorian date of a day count since 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Howard Hinnant's `days_from_civil`, the inverse of `civil(fromDays:)`.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
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
