import Foundation
import LedgerJSON
import PurchaseLedger

extension PaymentRecord {
    /// Writes a payment as `GET /v1/lookup` answers it: the fields of `ledger unconsumed --json`,
    /// then how it was recorded and what became of it (never its purchase token).
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        payment.writeFields(into: &w)
        w.field("kind", kind)
        w.field("source", fromStore ? "notification" : "sdk")
        w.field("recordedAt", recordedAt)
        w.field("consumedAt", consumedAt)
        w.field("refundedAt", refundedAt)
        w.field("refundReason", refundReason)
        w.endObject()
    }
}
