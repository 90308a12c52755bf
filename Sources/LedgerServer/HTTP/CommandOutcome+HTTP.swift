import LedgerJSON
import Foundation
import HTTPTypes
import Hummingbird
import PurchaseLedger

extension CommandOutcome {
    /// The result as JSON: the object `ledger ingest` prints for a line, without `line`
    /// (CONTRACT.md §2.6).
    var json: String {
        var w = JSONWriter()
        write(into: &w, line: nil)
        return w.string
    }

    /// Writes the result object; `line` first when given (the batch route).
    func write(into w: inout JSONWriter, line: Int?) {
        w.beginObject()
        if let line { w.field("line", line) }
        w.field("status", status.rawValue)
        if let paymentSeq { w.field("paymentSeq", paymentSeq) }
        if let originalTransactionId { w.field("originalTransactionId", originalTransactionId) }
        if let notificationId { w.field("notificationId", notificationId) }
        if let consumedAt, status == .alreadyConsumed || status == .consumed {
            w.field("consumedAt", Timestamp(clamping: consumedAt).iso8601Milliseconds)
        }
        if let recorded { w.key("recorded"); w.strings(recorded) }
        if let payments { w.key("payments"); w.strings(payments) }
        if let error {
            w.key("error")
            w.beginObject()
            w.field("code", error.code.rawValue)
            w.field("message", error.message)
            w.endObject()
        }
        w.endObject()
    }

    /// The answer to one command: 200 with the result, 202 for `parked` (accepted, applied when
    /// its owner is known), the contract refusal's status with `{"code","message"}` otherwise.
    var response: Response {
        get throws {
            if let error, status == .rejected { throw APIError(error) }
            return .json(json, status: status == .parked ? .accepted : .ok)
        }
    }
}

extension JSONWriter {
    mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }
}
