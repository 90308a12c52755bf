import Foundation
import Postgres

extension Connection {
    /// The user's unconsumed payments, on the given stores (all when empty), ordered by purchase
    /// time then paymentSeq. An index range scan of `payments_unconsumed_idx`.
    public func unconsumed(userId: String, stores: Set<StoreCode> = []) throws -> [UnconsumedPayment] {
        let rows = try query("""
            SELECT payment_seq, user_id, store_code, product_id, product_type, price, currency,
                   transaction_id, coalesce(lineage_id, original_transaction_id) AS original_transaction_id,
                   purchase_time, expiry_time, payload, sandbox_payment, promotion_payment
              FROM ledger.payments
             WHERE user_id = \(userId) AND consumed_at IS NULL AND refunded_at IS NULL
               AND product_type <> 'AUTO_RENEWABLE' AND store_code = ANY(string_to_array(\(stores.storeList), ','))
             ORDER BY purchase_time, payment_seq
            """)
        return try rows.map { row in
            let payload = try row.decode("payload", as: [UInt8]?.self)
            return UnconsumedPayment(
                userId: try row.decode("user_id"),
                storeCode: try row.decodeEnum("store_code"),
                productId: try row.decode("product_id"),
                productType: try row.decodeEnum("product_type"),
                price: try Connection.price(row.decode("price", as: PostgresNumeric.self)),
                currency: try row.decode("currency"),
                paymentSeq: try row.decode("payment_seq"),
                transactionId: try row.decode("transaction_id"),
                originalTransactionId: try row.decode("original_transaction_id"),
                purchaseTime: try row.decode("purchase_time"),
                expiryTime: try row.decode("expiry_time"),
                payload: payload.map { String(decoding: $0, as: UTF8.self) },
                sandboxPayment: try row.decode("sandbox_payment"),
                promotionPayment: try row.decode("promotion_payment"))
        }
    }

    /// The user's subscription lineages at `at`, on the given stores (all when empty), ordered by
    /// store then originalTransactionId; only active ones unless `includeExpired`.
    public func subscriptions(userId: String, stores: Set<StoreCode> = [], at: Date,
                              includeExpired: Bool = false) throws -> [Subscription] {
        let rows = try query("""
            SELECT user_id, store_code, product_id, product_type, original_transaction_id,
                   latest_payment_seq, purchase_time, expiry_time, auto_renewing, status, entitled,
                   grace_period_expiry_time
              FROM ledger.subscriptions_at(\(at)::timestamptz)
             WHERE user_id = \(userId) AND store_code = ANY(string_to_array(\(stores.storeList), ','))
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

extension Row {
    /// Decodes a text column into a string-backed enum, naming the column when the value is unknown.
    func decodeEnum<T: RawRepresentable>(_ column: String, as type: T.Type = T.self) throws -> T where T.RawValue == String {
        let text = try decode(column, as: String.self)
        guard let value = T(rawValue: text) else {
            throw PostgresError(kind: .decoding, message: "column \(column): unexpected value \"\(text)\" for \(T.self)")
        }
        return value
    }
}

extension Connection {
    /// A stored price (numeric, never negative) as a `Price`.
    static func price(_ numeric: PostgresNumeric) throws -> Price {
        guard let price = Price(numeric.text) else {
            throw PostgresError(kind: .decoding, message: "column price: \(numeric.text) is not a price")
        }
        return price
    }
}
