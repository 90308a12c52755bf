import Foundation
import Postgres

extension Subscription {
    /// The user's subscription lineages at `at`, on the given stores (all when empty), ordered by
    /// store then originalTransactionId; only active ones unless `includeExpired`
    /// (`ledger.user_subscriptions_at`, which a Citus cluster runs on the user's shard).
    package static func fetchAll(_ connection: Connection, userId: String, stores: Set<StoreCode> = [],
                                 at: Date, includeExpired: Bool = false) throws -> [Subscription] {
        let rows = try connection.query("""
            SELECT user_id, store_code, product_id, product_type, original_transaction_id,
                   latest_payment_seq, purchase_time, expiry_time, auto_renewing, status, entitled,
                   grace_period_expiry_time
              FROM ledger.user_subscriptions_at(\(userId), \(at)::timestamptz)
             WHERE store_code = ANY(\(stores.storeList)::text[])
               AND (\(includeExpired) OR entitled)
             ORDER BY store_code, original_transaction_id
            """)
        return try rows.map { row in
            Subscription(
                userId: try row.decode("user_id"),
                storeCode: try row.decodeEnum("store_code"),
                productId: try row.decode("product_id"),
                productType: try row.decodeEnum("product_type"),
                originalTransactionId: try row.decode("original_transaction_id"),
                latestPaymentSeq: try row.decode("latest_payment_seq"),
                purchaseTime: try row.decode("purchase_time"),
                expiryTime: try row.decode("expiry_time"),
                autoRenewing: try row.decode("auto_renewing"),
                status: try row.decodeEnum("status"),
                entitled: try row.decode("entitled"),
                gracePeriodExpiryTime: try row.decode("grace_period_expiry_time"))
        }
    }
}

