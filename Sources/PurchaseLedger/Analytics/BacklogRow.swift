import Foundation
import Postgres

/// One store and product of `ledger analytics backlog`: goods paid for but not handed out.
public struct BacklogRow: Sendable, Hashable {
    /// The store.
    public var storeCode: StoreCode
    /// The store's product ID.
    public var productId: String
    /// Consumable payments purchased by the instant and neither consumed nor refunded by then.
    public var unconsumed: Int
    /// The purchase time of the oldest of them.
    public var oldestPurchaseTime: Date
    /// Median age at the instant, in whole seconds (percentile_cont 0.5, rounded down).
    public var medianAgeSeconds: Int
    /// 95th-percentile age at the instant, in whole seconds (percentile_cont 0.95, rounded down).
    public var p95AgeSeconds: Int

    /// A row with these values.
    public init(storeCode: StoreCode, productId: String, unconsumed: Int, oldestPurchaseTime: Date,
                medianAgeSeconds: Int, p95AgeSeconds: Int) {
        self.storeCode = storeCode
        self.productId = productId
        self.unconsumed = unconsumed
        self.oldestPurchaseTime = oldestPurchaseTime
        self.medianAgeSeconds = medianAgeSeconds
        self.p95AgeSeconds = p95AgeSeconds
    }
}

extension BacklogRow {
    /// The unconsumed backlog at `at`, per store and product, ordered by store then product.
    package static func fetchAll(_ connection: Connection, at: Date, stores: Set<StoreCode> = [],
                                 includeSandbox: Bool = false) throws -> [BacklogRow] {
        let rows = try connection.query("""
            SELECT store_code, product_id, unconsumed, oldest_purchase_time,
                   floor(extract(epoch FROM median_age))::bigint AS median_age,
                   floor(extract(epoch FROM p95_age))::bigint AS p95_age
              FROM analytics.backlog(\(at)::timestamptz, \(includeSandbox))
             WHERE store_code = ANY(\(stores.storeList)::text[])
             ORDER BY 1, 2
             LIMIT \(AnalyticsLimits.maxRows + 1)
            """)
        return try rows.map { row in
            BacklogRow(storeCode: try row.decodeEnum("store_code"), productId: try row.decode("product_id"),
                       unconsumed: try row.decode("unconsumed"), oldestPurchaseTime: try row.decode("oldest_purchase_time"),
                       medianAgeSeconds: try row.decode("median_age"), p95AgeSeconds: try row.decode("p95_age"))
        }
    }
}
