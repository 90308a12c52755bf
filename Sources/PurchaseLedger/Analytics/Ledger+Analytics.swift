import Foundation
import Postgres

extension Ledger {
    /// Payments, gross, refunds and net per period, store and currency (CONTRACT.md §3.4).
    public func revenue(_ query: AnalyticsQuery) async throws -> [RevenueRow] {
        try await report { try RevenueRow.fetchAll($0, query) }
    }

    /// Active subscription lineages at each period's exclusive end, per store and product.
    public func subscribers(_ query: AnalyticsQuery) async throws -> [SubscribersRow] {
        try await report { try SubscribersRow.fetchAll($0, query) }
    }

    /// Starts, renewals and churn per period, store and product.
    public func churn(_ query: AnalyticsQuery) async throws -> [ChurnRow] {
        try await report { try ChurnRow.fetchAll($0, query) }
    }

    /// Refunds per period (by refund time), store and currency.
    public func refunds(_ query: AnalyticsQuery) async throws -> [RefundsRow] {
        try await report { try RefundsRow.fetchAll($0, query) }
    }

    /// Goods paid for but not handed out at `instant`, per store and product, with their age.
    public func backlog(at instant: Date = Date(), stores: Set<StoreCode> = [],
                        includeSandbox: Bool = false) async throws -> [BacklogRow] {
        try await report {
            try BacklogRow.fetchAll($0, at: instant, stores: stores, includeSandbox: includeSandbox)
        }
    }

    /// Runs a report's statement without JIT compilation (`SET LOCAL jit = off`). The reports
    /// read a bounded window of the projections; at 10M events PostgreSQL compiled their plans
    /// for 0.1 to 0.4 s, more than the compiled code saved: 30 days of revenue took 1.43 and 1.54 s
    /// with JIT and 1.33 and 1.13 s without, churn 1.24 and 1.23 s against 1.09 and 0.96 s
    /// (BENCHMARKS.md). The plans are the same either way.
    private func report<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await pool.withConnection { connection in
            try connection.transaction { tx in
                try tx.execute("SET LOCAL jit = off")
                return try body(tx)
            }
        }
    }

    /// The periods of a report, in order: each one's first day (a period without rows included).
    public func periods(_ query: AnalyticsQuery) async throws -> [CalendarDay] {
        try await pool.withConnection { try CalendarDay.fetchPeriods($0, query) }
    }
}
