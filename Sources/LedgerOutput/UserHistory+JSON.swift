import Foundation
import LedgerJSON
import PurchaseLedger

extension UserHistory {
    /// Writes a history as `GET /v1/users/{userId}/history` answers it and `ledger history --json`
    /// prints it: `{"entries": [...], "truncated": false}`, the entries in time order.
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        w.key("entries")
        w.beginArray()
        for entry in entries { entry.write(into: &w) }
        w.endArray()
        w.field("truncated", truncated)
        w.endObject()
    }
}

extension HistoryEntry {
    /// Writes one entry: the event's place and times, what it changed, the store's notification
    /// id, and the jobs it caused (never a purchase token nor its digest).
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        w.key("position")
        w.rawNumber(String(position))
        w.field("occurredAt", occurredAt)
        w.field("recordedAt", recordedAt)
        w.field("stream", stream)
        w.field("type", type.rawValue)
        w.field("change", change)
        w.field("summary", summary)
        w.field("storeCode", storeCode?.rawValue)
        w.field("paymentSeq", paymentSeq)
        w.field("originalTransactionId", originalTransactionId)
        w.field("notificationId", notificationId)
        w.key("jobs")
        w.beginArray()
        for job in jobs {
            w.beginObject()
            w.key("id")
            w.rawNumber(String(job.id))
            w.field("kind", job.kind)
            w.field("state", job.state)
            w.field("outcome", job.outcome)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }
}
