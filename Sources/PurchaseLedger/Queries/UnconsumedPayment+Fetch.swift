import Foundation
import Postgres

extension UnconsumedPayment {
    /// The user's unconsumed payments, on the given stores (all when empty), ordered by purchase
    /// time then paymentSeq. An index range scan of `payments_unconsumed_idx`.
    package static func fetchAll(_ connection: Connection, userId: String,
                                 stores: Set<StoreCode> = []) throws -> [UnconsumedPayment] {
        let rows = try connection.query("""
            SELECT payment_seq, user_id, store_code, product_id, product_type, price, currency,
                   transaction_id, coalesce(lineage_id, original_transaction_id) AS original_transaction_id,
                   purchase_time, expiry_time, payload, sandbox_payment, promotion_payment
              FROM ledger.payments
             WHERE user_id = \(userId) AND consumed_at IS NULL AND refunded_at IS NULL
               AND product_type <> 'AUTO_RENEWABLE' AND store_code = ANY(\(stores.storeList)::text[])
             ORDER BY purchase_time, payment_seq
            """)
        return try rows.map(UnconsumedPayment.init(row:))
    }
}

extension UnconsumedPayment {
    /// A payment's fields from a row of `ledger.payments` that selects them under their column
    /// names (`original_transaction_id` as the lineage, else as given), for this list and for
    /// ``PaymentRecord``.
    package init(row: Row) throws {
        let payload = try row.decode("payload", as: [UInt8]?.self)
        self.init(
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
