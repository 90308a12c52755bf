import Foundation

extension Ledger {
    /// Payments, gross, refunds and net per period, store and currency (CONTRACT.md §3.4).
    public func revenue(_ query: AnalyticsQuery) async throws -> [RevenueRow] {
        try await pool.withConnection { try RevenueRow.fetchAll($0, query) }
    }

    /// Active subscription lineages at each period's exclusive end, per store and product.
    public func subscribers(_ query: AnalyticsQuery) async throws -> [SubscribersRow] {
        try await pool.withConnection { try SubscribersRow.fetchAll($0, query) }
    }

    /// Starts, renewals and churn per period, store and product.
    public func churn(_ query: AnalyticsQuery) async throws -> [ChurnRow] {
        try await pool.withConnection { try ChurnRow.fetchAll($0, query) }
    }

    /// Refunds per period (by refund time), store and currency.
    public func refunds(_ query: AnalyticsQuery) async throws -> [RefundsRow] {
        try await pool.withConnection { try RefundsRow.fetchAll($0, query) }
    }

    /// Goods paid for but not handed out at `instant`, per store and product, with their age.
    public func backlog(at instant: Date = Date(), stores: Set<StoreCode> = [],
                        includeSandbox: Bool = false) async throws -> [BacklogRow] {
        try await pool.withConnection {
            try BacklogRow.fetchAll($0, at: instant, stores: stores, includeSandbox: includeSandbox)
        }
    }

    /// The periods of a report, in order: each one's first day (a period without rows included).
    public func periods(_ query: AnalyticsQuery) async throws -> [CalendarDay] {
        try await pool.withConnection { try CalendarDay.fetchPeriods($0, query) }
    }
}
