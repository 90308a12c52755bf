import Foundation
import Postgres

/// One period, store and currency of `ledger analytics revenue` (docs/contract.md §3.4).
public struct RevenueRow: Sendable, Hashable {
    /// The period's first day.
    public var period: CalendarDay
    /// The store.
    public var storeCode: StoreCode
    /// The ISO 4217 currency: money is never converted.
    public var currency: String
    /// Payments purchased in the period.
    public var payments: Int
    /// Sum of their prices.
    public var gross: PostgresNumeric
    /// Sum of the prices of the payments refunded in the period (by refund time).
    public var refunds: PostgresNumeric
    /// `gross - refunds`.
    public var net: PostgresNumeric

    /// A row with these values.
    public init(period: CalendarDay, storeCode: StoreCode, currency: String, payments: Int,
                gross: PostgresNumeric, refunds: PostgresNumeric, net: PostgresNumeric) {
        self.period = period
        self.storeCode = storeCode
        self.currency = currency
        self.payments = payments
        self.gross = gross
        self.refunds = refunds
        self.net = net
    }
}

extension RevenueRow {
    /// Revenue per period, store and currency, ordered by period, store, currency: the products
    /// of `analytics.revenue` summed. Only combinations with a payment or a refund have a row.
    package static func fetchAll(_ connection: Connection, _ q: AnalyticsQuery) throws -> [RevenueRow] {
        let rows = try connection.query("""
            SELECT to_char(period, 'YYYY-MM-DD') AS period, store_code, currency,
                   sum(payments)::bigint AS payments, sum(gross) AS gross, sum(refunds) AS refunds, sum(net) AS net
              FROM analytics.revenue(\(q.from.description)::date, \(q.to.description)::date, \(q.by.rawValue), \(q.includeSandbox))
             WHERE store_code = ANY(\(q.stores.storeList)::text[])
             GROUP BY 1, 2, 3
             ORDER BY 1, 2, 3
             LIMIT \(AnalyticsLimits.maxRows + 1)
            """)
        return try rows.map { row in
            RevenueRow(period: try row.decodeDay("period"), storeCode: try row.decodeEnum("store_code"),
                       currency: try row.decode("currency"), payments: try row.decode("payments"),
                       gross: try row.decode("gross"), refunds: try row.decode("refunds"), net: try row.decode("net"))
        }
    }
}

extension CalendarDay {
    /// The periods of a report, in order, as `analytics.periods` cuts them: each one's first day.
    package static func fetchPeriods(_ connection: Connection, _ q: AnalyticsQuery) throws -> [CalendarDay] {
        try connection.query("""
            SELECT to_char(period, 'YYYY-MM-DD') AS period
              FROM analytics.periods(\(q.from.description)::date, \(q.to.description)::date, \(q.by.rawValue))
             ORDER BY 1
            """).map { try $0.decodeDay("period") }
    }
}

extension Row {
    /// Decodes a `YYYY-MM-DD` text column.
    func decodeDay(_ column: String) throws -> CalendarDay {
        let text = try decode(column, as: String.self)
        guard let day = CalendarDay(text) else {
            throw PostgresError(kind: .decoding, message: "column \(column): \"\(text)\" is not a YYYY-MM-DD day")
        }
        return day
    }
}
