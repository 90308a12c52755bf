/// How long one period of an analytics report is (UTC calendar periods).
public enum AnalyticsPeriod: String, Sendable, CaseIterable {
    /// One UTC calendar day.
    case day
    /// One UTC calendar month, labelled by its first day.
    case month
}

/// What an analytics report covers: the UTC days `[from, to)` cut into periods, on some stores.
public struct AnalyticsQuery: Sendable, Hashable {
    /// The first day, inclusive.
    public var from: CalendarDay
    /// The day after the last, exclusive.
    public var to: CalendarDay
    /// One row (per store, ...) for each period; a period that `from` or `to` cuts is cut to the range.
    public var by: AnalyticsPeriod
    /// Only these stores; every store when empty.
    public var stores: Set<StoreCode>
    /// Count sandbox payments too (left out by default).
    public var includeSandbox: Bool

    /// A report over `[from, to)` by `by`, on `stores` (all when empty).
    public init(from: CalendarDay, to: CalendarDay, by: AnalyticsPeriod = .day, stores: Set<StoreCode> = [],
                includeSandbox: Bool = false) {
        self.from = from
        self.to = to
        self.by = by
        self.stores = stores
        self.includeSandbox = includeSandbox
    }
}
