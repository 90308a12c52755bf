import Postgres

/// One period, store and currency of `ledger analytics refunds`.
public struct RefundsRow: Sendable, Hashable {
    /// The period's first day (periods by refund time).
    public var period: CalendarDay
    /// The store.
    public var storeCode: StoreCode
    /// The ISO 4217 currency: money is never converted.
    public var currency: String
    /// Payments refunded in the period.
    public var refunds: Int
    /// Sum of their prices.
    public var amount: PostgresNumeric
    /// Of those, payments consumed at or before the refund: goods handed out, then the money
    /// taken back (the fraud signal).
    public var refundsAfterConsume: Int
    /// Sum of their prices.
    public var amountAfterConsume: PostgresNumeric

    /// A row with these values.
    public init(period: CalendarDay, storeCode: StoreCode, currency: String, refunds: Int,
                amount: PostgresNumeric, refundsAfterConsume: Int, amountAfterConsume: PostgresNumeric) {
        self.period = period
        self.storeCode = storeCode
        self.currency = currency
        self.refunds = refunds
        self.amount = amount
        self.refundsAfterConsume = refundsAfterConsume
        self.amountAfterConsume = amountAfterConsume
    }
}

extension RefundsRow {
    /// Refunds per period, store and currency, ordered by period, store, currency.
    package static func fetchAll(_ connection: Connection, _ q: AnalyticsQuery) throws -> [RefundsRow] {
        let rows = try connection.query("""
            SELECT to_char(period, 'YYYY-MM-DD') AS period, store_code, currency,
                   sum(refunds)::bigint AS refunds, sum(amount) AS amount,
                   sum(refunds_after_consume)::bigint AS refunds_after_consume,
                   sum(amount_after_consume) AS amount_after_consume
              FROM analytics.refunds(\(q.from.description)::date, \(q.to.description)::date, \(q.by.rawValue), \(q.includeSandbox))
             WHERE store_code = ANY(\(q.stores.storeList)::text[])
             GROUP BY 1, 2, 3
             ORDER BY 1, 2, 3
             LIMIT \(AnalyticsLimits.maxRows + 1)
            """)
        return try rows.map { row in
            RefundsRow(period: try row.decodeDay("period"), storeCode: try row.decodeEnum("store_code"),
                       currency: try row.decode("currency"), refunds: try row.decode("refunds"),
                       amount: try row.decode("amount"), refundsAfterConsume: try row.decode("refunds_after_consume"),
                       amountAfterConsume: try row.decode("amount_after_consume"))
        }
    }
}
