import Foundation
import Postgres

extension PaymentRecord {
    /// The payment `key` names, or nil. One index probe: the payment's key, its alias's, the
    /// store transaction's unique key, or Google's token digests.
    package static func fetch(_ connection: Connection, _ key: PaymentKey) throws -> PaymentRecord? {
        let match: SQL
        switch key {
        case .paymentSeq(let seq):
            match = """
                p.payment_seq = coalesce((SELECT a.payment_seq FROM ledger.payment_aliases a WHERE a.alias_seq = \(seq)), \(seq))
                """
        case .transaction(let store, let transactionId):
            match = "p.store_code = \(store.rawValue) AND p.transaction_id = \(transactionId)"
        case .googlePurchaseToken(let digest):
            // payments_google_token_idx; a subscription's renewals share the token.
            match = """
                p.store_code = 'GG' AND p.token_sha256 = decode(\(digest), 'hex')
                ORDER BY p.purchase_time DESC, p.payment_seq DESC LIMIT 1
                """
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
