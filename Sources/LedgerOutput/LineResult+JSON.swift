import Foundation
import LedgerJSON
import PurchaseLedger

extension CommandOutcome {
    /// Writes the result object of docs/contract.md §2.6: `line` first when given (what `ledger
    /// ingest` and the HTTP batch route print per line), without it for one command over HTTP.
    public func write(into w: inout JSONWriter, line: Int?) {
        w.beginObject()
        if let line { w.field("line", line) }
        w.field("status", status.rawValue)
        if let paymentSeq { w.field("paymentSeq", paymentSeq) }
        if let originalTransactionId { w.field("originalTransactionId", originalTransactionId) }
        if let notificationId { w.field("notificationId", notificationId) }
        if let consumedAt, status == .alreadyConsumed || status == .consumed {
            w.field("consumedAt", consumedAt)
        }
        if let recorded { w.stringArray("recorded", recorded) }
        if let payments { w.stringArray("payments", payments) }
        if let error {
            w.key("error")
            w.beginObject()
            w.field("code", error.code.rawValue)
            w.field("message", error.message)
            w.endObject()
        }
        w.endObject()
    }

    /// The result object without `line`.
    public var json: String {
        var w = JSONWriter()
        write(into: &w, line: nil)
        return w.string
    }
}

extension Ingestor.LineResult {
    /// The line `ledger ingest` prints for this result (docs/contract.md §2.6).
    public var json: String {
        var w = JSONWriter()
        outcome.write(into: &w, line: line)
        return w.string
    }
}
