import Foundation
import Postgres

/// An instant in UTC with microsecond precision, as PostgreSQL's `timestamptz` holds it.
///
/// The text forms (``parseISO8601(_:)``, ``iso8601Milliseconds``, ``description``) cover the
/// years 0001 to 9999; the calendar arithmetic is the `Postgres` package's civil calendar
/// (proleptic Gregorian, Howard Hinnant's `days_from_civil` and `civil_from_days`), without
/// `Calendar` or `DateFormatter`, so results never depend on the machine's locale or zone.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z; negative before it.
    public var microseconds: Int64

    /// The instant `microseconds` after the Unix epoch.
    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// The instant `epochMilliseconds` after the Unix epoch.
    ///
    /// Traps when the value does not fit in microseconds (about ±292,000
    /// years): for trusted values only.
    public init(epochMilliseconds: Int64) {
        self.microseconds = epochMilliseconds * 1000
    }

    /// The instant `epochMilliseconds` after the Unix epoch, or `nil` when it
    /// lies outside ``supportedRange`` (years 0001 to 9999). Never traps: the one path by which
    /// untrusted epoch milliseconds (commands, App Store JWS, Google Play) become an instant.
    package init?(checkedEpochMilliseconds epochMilliseconds: Int64) {
        let (micros, overflow) = epochMilliseconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        let timestamp = Timestamp(microseconds: micros)
        guard Self.supportedRange.contains(timestamp) else { return nil }
        self = timestamp
    }

    /// The instant `date` stands for (`Date.unixMicroseconds`): the nearest microsecond
    /// within about 136 years of 2001; further out, where a `Date` cannot hold every
    /// microsecond, the one with the fewest digits that it can stand for, so a time given
    /// in whole milliseconds comes back unchanged anywhere in the years 0001 to 9999.
    public init(_ date: Date) {
        self.microseconds = date.unixMicroseconds
    }

    /// The same instant as a Foundation `Date`, the nearest one.
    ///
    /// A `Date` is a `Double` of seconds since 2001, so it keeps every microsecond only within
    /// about 136 years of 2001 (1865 to 2137); further out, `Timestamp(t.date)` may differ
    /// from `t` by some microseconds (never for whole milliseconds). For an instant in
    /// ``supportedRange`` it never reads back outside it: the last microseconds of 9999,
    /// whose nearest `Date` is 10000-01-01, give the `Date` just before.
    public var date: Date {
        let date = Date(unixMicroseconds: microseconds)
        guard Self.supportedRange.contains(self) else { return date }
        var seconds = date.timeIntervalSinceReferenceDate
        while Timestamp(Date(timeIntervalSinceReferenceDate: seconds)) > Self.supportedRange.upperBound {
            seconds = seconds.nextDown
        }
        while Timestamp(Date(timeIntervalSinceReferenceDate: seconds)) < Self.supportedRange.lowerBound {
            seconds = seconds.nextUp
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// Milliseconds since the Unix epoch, rounded toward the past.
    public var epochMilliseconds: Int64 {
        CivilDate.floorDivide(microseconds, 1000).quotient
    }

    /// The current instant, from the system clock.
    public static var now: Timestamp {
        Timestamp(Date())
    }

    /// The instants the text forms handle: 0001-01-01T00:00:00Z through
    /// 9999-12-31T23:59:59.999999Z.
    public static let supportedRange: ClosedRange<Timestamp> =
        Timestamp(microseconds: -62_135_596_800_000_000)...Timestamp(microseconds: 253_402_300_799_999_999)

    /// Orders instants from past to future.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microseconds < rhs.microseconds
    }

    /// ISO-8601 in UTC with all six fractional digits: `2026-01-01T00:00:00.123456Z`.
    public var description: String {
        iso8601Microseconds
    }

    // MARK: Arithmetic shared by the text forms

    static let microsecondsPerSecond: Int64 = 1_000_000
    static let microsecondsPerDay: Int64 = 86_400 * microsecondsPerSecond
}
