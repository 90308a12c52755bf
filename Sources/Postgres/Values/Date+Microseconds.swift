import Foundation

/// Exact conversions between `Date` and whole microseconds since the Unix epoch, PostgreSQL's
/// resolution.
///
/// A `Date` is a `Double` of seconds since 2001, so it holds every microsecond only within
/// about 136 years of 2001 (1865 to 2137). Further out its steps are coarser (about 30 µs in
/// the year 9999), and converting by multiplying and rounding can land on a neighbour of the
/// instant meant: `9999-12-31T23:59:59.999Z` came back as `…59.998985Z` and printed one
/// millisecond early. These two conversions round once each way, and read a coarse `Date` back
/// as the microsecond with the fewest digits that it can stand for, so every whole millisecond
/// of the years 0001 to 9999 (every microsecond near 2001) survives `Date` unchanged.
extension Date {
    /// The `Date` nearest to `microseconds` after 1970-01-01T00:00:00Z, rounded once.
    public init(unixMicroseconds microseconds: Int64) {
        let sinceReference = microseconds &- Date.referenceDateMicroseconds
        var seconds = sinceReference / 1_000_000
        var fraction = sinceReference % 1_000_000
        if fraction < 0 {
            seconds -= 1
            fraction += 1_000_000
        }
        // Whole seconds (below 2^53) are exact; the fraction's own rounding error (1e-16 s) is
        // far smaller than the distance of any microsecond from a midpoint between two Dates
        // whose step is a microsecond or more, so the sum rounds to the nearest Date.
        self.init(timeIntervalSinceReferenceDate: Double(seconds) + Double(fraction) / 1_000_000)
    }

    /// The microseconds since 1970-01-01T00:00:00Z that this `Date` stands for.
    ///
    /// Where a `Date`'s step is under a microsecond (1865 to 2137), the nearest microsecond.
    /// Elsewhere, of the microseconds whose nearest `Date` is this one, the one with the most
    /// trailing zeros (a whole second before a whole millisecond before anything finer), so that
    /// `Date(unixMicroseconds: m).unixMicroseconds == m` for every whole millisecond `m`.
    /// NaN reads as 2001-01-01; dates beyond ±285,000 years are clamped so nothing traps.
    public var unixMicroseconds: Int64 {
        let interval = timeIntervalSinceReferenceDate
        guard abs(interval) < Date.maximumSeconds else {
            let clamped = interval.isNaN ? 0 : interval > 0 ? Date.maximumMicroseconds : -Date.maximumMicroseconds
            return clamped + Date.referenceDateMicroseconds
        }
        let whole = interval.rounded(.down)
        let center = (interval - whole) * 1_000_000  // microseconds into the second, 0 ..< 1e6
        let halfStep = Swift.max(interval.ulp * 500_000, 0.5)
        let low = (center - halfStep).rounded(.up), high = (center + halfStep).rounded(.down)
        var micros = center.rounded()
        var unit = 1_000_000.0
        while unit >= 1 {
            let candidate = (center / unit).rounded() * unit
            if candidate >= low, candidate <= high {
                micros = candidate
                break
            }
            unit /= 10
        }
        return Int64(whole) * 1_000_000 + Int64(micros) + Date.referenceDateMicroseconds
    }

    /// 2001-01-01T00:00:00Z, `Date`'s reference date, in Unix microseconds.
    static let referenceDateMicroseconds: Int64 = 978_307_200 * 1_000_000
    /// About 285,000 years either side of 2001, well inside `Int64` microseconds.
    private static let maximumSeconds = 9.0e12
    private static let maximumMicroseconds: Int64 = 9_000_000_000_000_000_000
}
