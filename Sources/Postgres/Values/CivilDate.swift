/// A proleptic Gregorian calendar date, converted to and from a day count with Howard Hinnant's
/// algorithms (<https://howardhinnant.github.io/date_algorithms.html>), without `Calendar` or
/// `DateFormatter`, so results never depend on the machine's locale or zone.
///
/// The package's one civil calendar: `timestamptz` text (`PostgresTimestamp`), the ledger's
/// ISO-8601 times and its analytics days all count days with it.
package struct CivilDate: Equatable, Sendable {
    /// The year; 0 is 1 BC, -1 is 2 BC.
    package var year: Int64
    /// The month, 1 to 12.
    package var month: Int64
    /// The day of the month, from 1.
    package var day: Int64

    package init(year: Int64, month: Int64, day: Int64) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01 (`days_from_civil`).
    package var daysSinceEpoch: Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = Self.floorDivide(y, 400).quotient
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (`civil_from_days`).
    package init(daysSinceEpoch days: Int64) {
        let z = days + 719_468
        let era = Self.floorDivide(z, 146_097).quotient
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Whether `year` is a Gregorian leap year.
    package static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// The number of days in `month` (1-12) of `year`.
    package static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Division rounding toward negative infinity, with a remainder in `0..<divisor`.
    package static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }
}
