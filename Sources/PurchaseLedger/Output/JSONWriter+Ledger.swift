import Foundation
import LedgerJSON

extension JSONWriter {
    /// A time as the ledger prints it (``Timestamp/init(clamping:)``), or null.
    mutating func field(_ key: String, _ date: Date?) {
        field(key, date.map { Timestamp(clamping: $0).iso8601Milliseconds })
    }

    mutating func stringArray(_ key: String, _ values: [String]) {
        self.key(key)
        beginArray()
        for value in values { string(value) }
        endArray()
    }
}

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

extension UnconsumedPayment {
    /// Writes the element `ledger unconsumed --json` prints (CONTRACT.md §3.1).
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field("userId", userId)
        w.field("storeCode", storeCode.rawValue)
        w.field("productId", productId)
        w.field("productType", productType.rawValue)
        w.field("price", price.text)
        w.field("currency", currency)
        w.field("paymentSeq", paymentSeq)
        w.field("transactionId", transactionId)
        w.field("originalTransactionId", originalTransactionId)
        w.field("purchaseTime", purchaseTime)
        w.field("expiryTime", expiryTime)
        w.field("payload", payload)
        w.field("sandboxPayment", sandboxPayment)
        w.field("promotionPayment", promotionPayment)
        w.endObject()
    }
}

extension Subscription {
    /// Writes the element `ledger subscriptions --json` prints (CONTRACT.md §3.2).
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field("userId", userId)
        w.field("storeCode", storeCode.rawValue)
        w.field("productId", productId)
        w.field("productType", productType.rawValue)
        w.field("originalTransactionId", originalTransactionId)
        w.field("latestPaymentSeq", latestPaymentSeq)
        w.field("purchaseTime", purchaseTime)
        w.field("expiryTime", expiryTime)
        w.field("autoRenewing", autoRenewing)
        w.field("status", status.rawValue)
        w.field("entitled", entitled)
        w.field("gracePeriodExpiryTime", gracePeriodExpiryTime)
        w.endObject()
    }
}
