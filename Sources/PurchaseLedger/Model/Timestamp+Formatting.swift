import Foundation
import Postgres

extension Timestamp {
    /// ISO-8601 in UTC with milliseconds, as the contract prints times:
    /// `2026-01-01T00:00:00.000Z`.
    ///
    /// Sub-millisecond digits are dropped toward the past, before 1970 too:
    /// one microsecond before the epoch is `1969-12-31T23:59:59.999Z`.
    public var iso8601Milliseconds: String {
        format(fractionDigits: 3)
    }

    /// ISO-8601 in UTC with all six fractional digits, `2026-01-01T00:00:00.123456Z`: how
    /// event data keeps times (``description`` is the same text).
    var iso8601Microseconds: String {
        format(fractionDigits: 6)
    }

    /// The instant `date` stands for, moved to the nearest end of ``supportedRange`` when it lies
    /// outside (only a direct SQL caller could have stored such an instant), so that its
    /// ``iso8601Milliseconds`` is always a time the ledger accepts back, never a five-digit or
    /// negative year. `Timestamp(clamping: date).iso8601Milliseconds` is how the ledger prints
    /// every time (UTC, milliseconds): `2026-01-01T00:00:00.000Z`.
    public init(clamping date: Date) {
        self = min(max(Timestamp(date), Self.supportedRange.lowerBound), Self.supportedRange.upperBound)
    }

    /// `YYYY-MM-DDTHH:MM:SS.f…Z` in UTC, with the fraction truncated toward the past to
    /// `fractionDigits` (1 to 6) digits.
    ///
    /// Years outside 0001-9999 are written with as many digits as they need
    /// (and a leading `-` before year 0), which the parser does not accept back.
    private func format(fractionDigits: Int) -> String {
        let (days, microsOfDay) = CivilDate.floorDivide(microseconds, Self.microsecondsPerDay)
        let date = CivilDate(daysSinceEpoch: days)
        let secondsOfDay = microsOfDay / Self.microsecondsPerSecond
        let fraction = microsOfDay % Self.microsecondsPerSecond

        var out: [UInt8] = []
        out.reserveCapacity(32)
        if date.year < 0 { out.append(UInt8(ascii: "-")) }
        Self.appendDigits(date.year.magnitude, width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        Self.appendDigits(UInt64(date.month), width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        Self.appendDigits(UInt64(date.day), width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        Self.appendDigits(UInt64(secondsOfDay / 3600), width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        Self.appendDigits(UInt64(secondsOfDay / 60 % 60), width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        Self.appendDigits(UInt64(secondsOfDay % 60), width: 2, to: &out)
        out.append(UInt8(ascii: "."))
        var divisor: Int64 = 1
        for _ in fractionDigits..<6 { divisor *= 10 }
        Self.appendDigits(UInt64(fraction / divisor), width: fractionDigits, to: &out)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `value` in decimal, left-padded with zeros to at least `width` digits.
    private static func appendDigits(_ value: UInt64, width: Int, to out: inout [UInt8]) {
        var digits: [UInt8] = []
        var rest = value
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        for _ in digits.count..<max(width, digits.count) {
            out.append(UInt8(ascii: "0"))
        }
        out.append(contentsOf: digits.reversed())
    }
}
