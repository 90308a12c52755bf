import Foundation
import Postgres

extension PaymentRecord {
    /// The payment `key` names, or nil. Two statements, as a command asks: the key's registry
    /// (`ledger.payment_keys` for a paymentSeq or an alias, `ledger.transaction_keys` for a
    /// store transaction, `ledger.token_keys` for a Google token) names the owner, then the
    /// owner's row is read by its key. On a distributed ledger each goes to one shard, where a
    /// lookup by the key alone asked every shard; on one server each is one index probe.
    package static func fetch(_ connection: Connection, _ key: PaymentKey) throws -> PaymentRecord? {
        let registry: SQL
        switch key {
        case .paymentSeq(let seq):
            registry = "SELECT user_id, names_seq AS payment_seq FROM ledger.payment_keys WHERE payment_seq = \(seq)"
        case .transaction(let store, let transactionId):
            registry = """
                SELECT user_id, payment_seq FROM ledger.transaction_keys
                 WHERE store_code = \(store.rawValue) AND transaction_id = \(transactionId)
                """
        case .googlePurchaseToken(let digest):
            registry = "SELECT user_id, NULL::text AS payment_seq FROM ledger.token_keys WHERE token_sha256 = decode(\(digest), 'hex')"
        }
        guard let named = try connection.query(registry).first else { return nil }
        let owner = try named.decode("user_id", as: String.self)
        let match: SQL
        if let seq = try named.decode("payment_seq", as: String?.self) {
            match = "p.user_id = \(owner) AND p.payment_seq = \(seq)"
        } else if case .googlePurchaseToken(let digest) = key {
            // The owner's payments with the token (payments_google_token_idx); a subscription's
            // renewals share it: the latest.
            match = """
                p.user_id = \(owner) AND p.store_code = 'GG' AND p.token_sha256 = decode(\(digest), 'hex')
                ORDER BY p.purchase_time DESC, p.payment_seq DESC LIMIT 1
                """
        } else {
            return nil
        }
        let rows = try connection.query("""
            SELECT p.payment_seq, p.user_id, p.store_code, p.product_id, p.product_type, p.price, p.currency,
                   p.transaction_id, coalesce(p.lineage_id, p.original_transaction_id) AS original_transaction_id,
                   p.purchase_time, coalesce(p.extended_expiry_time, p.expiry_time) AS expiry_time,
                   p.payload, p.sandbox_payment, p.promotion_payment, p.kind,
                   p.token_sha256 IS NULL AND p.linked_token_sha256 IS NULL AS from_store,
                   p.recorded_at, p.consumed_at, p.refunded_at, p.refund_reason
              FROM ledger.payments p
             WHERE \(match)
            """)
        guard let row = rows.first else { return nil }
        return PaymentRecord(
            payment: try UnconsumedPayment(row: row),
            kind: try row.decode("kind"),
            fromStore: try row.decode("from_store"),
            recordedAt: try row.decode("recorded_at"),
            consumedAt: try row.decode("consumed_at"),
            refundedAt: try row.decode("refunded_at"),
            refundReason: try row.decode("refund_reason"))
    }
}
