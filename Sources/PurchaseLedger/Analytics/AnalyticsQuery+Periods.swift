extension AnalyticsQuery {
    /// How many calendar periods meet `[from, to)`: the rows a report has per store and product
    /// at most (0 when `to` is not after `from`).
    public var periodCount: Int {
        guard from < to else { return 0 }
        switch by {
        case .day:
            return Int(to.civil.daysSinceEpoch - from.civil.daysSinceEpoch)
        case .month:
            // Months from from's month up to to's month; to's month too when to is not its first day.
            return (to.year * 12 + to.month) - (from.year * 12 + from.month) + (to.day > 1 ? 1 : 0)
        }
    }
}
