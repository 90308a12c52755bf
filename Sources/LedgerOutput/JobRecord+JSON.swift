import Foundation
import LedgerJSON
import PurchaseLedger

extension JobRecord {
    /// Writes a job as `ledger jobs list --json` and `GET /v1/jobs` show it (never its token).
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field("id", Int(id))
        w.field("kind", kind)
        w.field("purpose", purpose)
        w.key("args")
        w.value((try? JSONParser.parse(args)) ?? .null)
        w.field("state", state.rawValue)
        w.field("attempts", attempts)
        w.field("runAfter", runAfter)
        if let leasedUntil { w.field("leasedUntil", leasedUntil) }
        w.field("createdAt", createdAt)
        if let finishedAt { w.field("finishedAt", finishedAt) }
        if let lastStatus { w.field("lastStatus", lastStatus) }
        if let lastCode { w.field("lastCode", lastCode) }
        if let lastError { w.field("lastError", lastError) }
        if let outcome { w.field("outcome", outcome) }
        if let paymentSeq { w.field("paymentSeq", paymentSeq) }
        w.endObject()
    }
}
