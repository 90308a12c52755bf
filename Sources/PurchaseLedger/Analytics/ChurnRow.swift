import Postgres

/// One period, store and product of `ledger analytics churn`: starts, renewals and churn.
public struct ChurnRow: Sendable, Hashable {
    /// The period's first day.
    public var period: CalendarDay
    /// The store.
    public var storeCode: StoreCode
    /// The store's product ID.
    public var productId: String
    /// Lineages whose first payment was purchased in the period.
    public var started: Int
    /// Later payments of lineages purchased in the period.
    public var renewed: Int
    /// Lineages whose access ended in the period with no payment extending it (once the end has
    /// passed): `churnedVoluntary + churnedInvoluntary + revoked`.
    public var churned: Int
    /// Ended at expiry with auto-renew off.
    public var churnedVoluntary: Int
    /// Ended at expiry with auto-renew on.
    public var churnedInvoluntary: Int
    /// Ended early by a refund.
    public var revoked: Int

    /// A row with these values.
    public init(period: CalendarDay, storeCode: StoreCode, productId: String, started: Int, renewed: Int,
                churned: Int, churnedVoluntary: Int, churnedInvoluntary: Int, revoked: Int) {
        self.period = period
        self.storeCode = storeCode
        self.productId = productId
        self.started = started
        self.renewed = renewed
        self.churned = churned
        self.churnedVoluntary = churnedVoluntary
        self.churnedInvoluntary = churnedInvoluntary
        self.revoked = revoked
    }
}

extension ChurnRow {
    /// Starts, renewals and churn per period, store and product, ordered by period, store, product.
    package static func fetchAll(_ connection: Connection, _ q: AnalyticsQuery) throws -> [ChurnRow] {
        let rows = try connection.query("""
            SELECT to_char(period, 'YYYY-MM-DD') AS period, store_code, product_id, started, renewed, churned,
                   churned_voluntary, churned_involuntary, revoked
              FROM analytics.churn(\(q.from.description)::date, \(q.to.description)::date, \(q.by.rawValue), \(q.includeSandbox))
             WHERE store_code = ANY(\(q.stores.storeList)::text[])
             ORDER BY 1, 2, 3
             LIMIT \(AnalyticsLimits.maxRows + 1)
            """)
        return try rows.map { row in
            ChurnRow(period: try row.decodeDay("period"), storeCode: try row.decodeEnum("store_code"),
                     productId: try row.decode("product_id"), started: try row.decode("started"),
                     renewed: try row.decode("renewed"), churned: try row.decode("churned"),
                     churnedVoluntary: try row.decode("churned_voluntary"),
                     churnedInvoluntary: try row.decode("churned_involuntary"), revoked: try row.decode("revoked"))
        }
    }
}
