import Postgres

/// A calendar day, `YYYY-MM-DD` (proleptic Gregorian), as analytics takes its ranges: a day
/// stands for its first instant in UTC.
public struct CalendarDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year, 1 to 9999.
    public let year: Int
    /// The month, 1 to 12.
    public let month: Int
    /// The day of the month, from 1.
    public let day: Int

    /// Parses `YYYY-MM-DD` exactly (four-digit year 0001-9999, a real month and day); nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              year >= 1, (1...12).contains(month), day >= 1, Int64(day) <= CivilDate.daysInMonth(Int64(month), year: Int64(year))
        else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// Earlier days first.
    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

extension CalendarDay {
    /// The same day as the package's civil calendar counts it.
    var civil: CivilDate {
        CivilDate(year: Int64(year), month: Int64(month), day: Int64(day))
    }
}
