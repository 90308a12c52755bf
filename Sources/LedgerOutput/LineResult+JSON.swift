import Foundation
import LedgerJSON
import PurchaseLedger

extension Ingestor.LineResult {
    /// The line `ledger ingest` prints for this result (CONTRACT.md §2.6).
    public var json: String {
        var w = JSONWriter()
        w.beginObject()
        w.field("line", line)
        w.field("status", outcome.status.rawValue)
        if let seq = outcome.paymentSeq { w.field("paymentSeq", seq) }
        if let original = outcome.originalTransactionId { w.field("originalTransactionId", original) }
        if let notificationId = outcome.notificationId { w.field("notificationId", notificationId) }
        if let consumedAt = outcome.consumedAt, outcome.status == .alreadyConsumed || outcome.status == .consumed {
            w.field("consumedAt", consumedAt)
        }
        if let recorded = outcome.recorded { w.stringArray("recorded", recorded) }
        if let payments = outcome.payments { w.stringArray("payments", payments) }
        if let error = outcome.error {
            w.key("error")
            w.beginObject()
            w.field("code", error.code.rawValue)
            w.field("message", error.message)
            w.endObject()
        }
        w.endObject()
        return w.string
    }
}
