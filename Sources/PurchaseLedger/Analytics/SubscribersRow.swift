import Postgres

/// One period, store and product of `ledger analytics subscribers` (docs/contract.md §3.4).
public struct SubscribersRow: Sendable, Hashable {
    /// The period's first day.
    public var period: CalendarDay
    /// The store.
    public var storeCode: StoreCode
    /// The store's product ID.
    public var productId: String
    /// Lineages active (docs/contract.md §3.2) at the period's exclusive end.
    public var active: Int

    /// A row with these values.
    public init(period: CalendarDay, storeCode: StoreCode, productId: String, active: Int) {
        self.period = period
        self.storeCode = storeCode
        self.productId = productId
        self.active = active
    }
}

extension SubscribersRow {
    /// Active subscription lineages at each period's exclusive end, per store and product,
    /// ordered by period, store, product. Only combinations with an active lineage have a row.
    package static func fetchAll(_ connection: Connection, _ q: AnalyticsQuery) throws -> [SubscribersRow] {
        let rows = try connection.query("""
            SELECT to_char(period, 'YYYY-MM-DD') AS period, store_code, product_id, active
              FROM analytics.subscribers(\(q.from.description)::date, \(q.to.description)::date, \(q.by.rawValue), \(q.includeSandbox))
             WHERE store_code = ANY(\(q.stores.storeList)::text[])
             ORDER BY 1, 2, 3
             LIMIT \(AnalyticsLimits.maxRows + 1)
            """)
        return try rows.map { row in
            SubscribersRow(period: try row.decodeDay("period"), storeCode: try row.decodeEnum("store_code"),
                           productId: try row.decode("product_id"), active: try row.decode("active"))
        }
    }
}
