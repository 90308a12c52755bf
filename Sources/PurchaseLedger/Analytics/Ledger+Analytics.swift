import Foundation
import Postgres

extension Ledger {
    /// How long a report may run unless the ledger is told otherwise: 30 s, far above what a
    /// report within ``AnalyticsLimits`` takes (BENCHMARKS.md), far below what a client waits.
    public static let defaultReportTimeout: Duration = .seconds(30)

    /// Payments, gross, refunds and net per period, store and currency (docs/contract.md §3.4).
    ///
    /// Like every report: throws ``LedgerError`` `INVALID_INPUT` naming `from`, `to` or `by`
    /// for a query over ``AnalyticsLimits`` (before the database is asked) or an answer over its
    /// rows, ``ReportTimeoutError`` past the report timeout, and `CancellationError` when the
    /// calling task is cancelled (the statement is cancelled on the server too).
    public func revenue(_ query: AnalyticsQuery) async throws -> [RevenueRow] {
        try AnalyticsLimits.check(query)
        return try AnalyticsLimits.capped(try await reports.run { try RevenueRow.fetchAll($0, query) }, query)
    }

    /// Active subscription lineages at each period's exclusive end, per store and product.
    public func subscribers(_ query: AnalyticsQuery) async throws -> [SubscribersRow] {
        try AnalyticsLimits.check(query)
        return try AnalyticsLimits.capped(try await reports.run { try SubscribersRow.fetchAll($0, query) }, query)
    }

    /// Starts, renewals and churn per period, store and product.
    public func churn(_ query: AnalyticsQuery) async throws -> [ChurnRow] {
        try AnalyticsLimits.check(query)
        return try AnalyticsLimits.capped(try await reports.run { try ChurnRow.fetchAll($0, query) }, query)
    }

    /// Refunds per period (by refund time), store and currency.
    public func refunds(_ query: AnalyticsQuery) async throws -> [RefundsRow] {
        try AnalyticsLimits.check(query)
        return try AnalyticsLimits.capped(try await reports.run { try RefundsRow.fetchAll($0, query) }, query)
    }

    /// Goods paid for but not handed out at `instant`, per store and product, with their age.
    /// Its work grows with the payments, not with `instant`; the row limit, the timeout and
    /// cancellation apply as to the other reports.
    public func backlog(at instant: Date = Date(), stores: Set<StoreCode> = [],
                        includeSandbox: Bool = false) async throws -> [BacklogRow] {
        try AnalyticsLimits.cappedBacklog(try await reports.run {
            try BacklogRow.fetchAll($0, at: instant, stores: stores, includeSandbox: includeSandbox)
        })
    }

    /// The periods of a report, in order: each one's first day (a period without rows included).
    public func periods(_ query: AnalyticsQuery) async throws -> [CalendarDay] {
        try AnalyticsLimits.check(query)
        return try await reports.run { try CalendarDay.fetchPeriods($0, query) }
    }
}
