import Foundation
import LedgerJSON
import PurchaseLedger

extension LedgerCommand {
    /// The command as the `ledger ingest` line of docs/contract.md §2 that means it, in the
    /// contract's canonical field names, times as ISO-8601. Covers the kinds the generator makes.
    var ndjsonLine: String {
        var w = JSONWriter()
        w.beginObject()
        switch self {
        case .record(let payment, let kind):
            w.field("type", kind.rawValue)
            payment.writeLineFields(into: &w)
        case .consume(let seq, let user, let token, let time):
            w.field("type", "consume")
            w.field("userId", user)
            w.field("paymentSeq", seq)
            if let token { w.field("purchaseToken", token) }
            if let time { w.field("time", Self.text(time)) }
        case .refund(let seq, let time, let reason):
            w.field("type", "refund")
            w.field("paymentSeq", seq)
            if let time { w.field("time", Self.text(time)) }
            if let reason { w.field("reason", reason) }
        case .cancel(let store, let original, let time):
            w.field("type", "cancel")
            w.field("storeCode", store.rawValue)
            w.field("originalTransactionId", original)
            if let time { w.field("time", Self.text(time)) }
        case .restore(let user, let store, let time, let purchases):
            w.field("type", "restore")
            w.field("userId", user)
            w.field("storeCode", store.rawValue)
            if let time { w.field("time", Self.text(time)) }
            w.key("purchases")
            w.beginArray()
            for payment in purchases {
                w.beginObject()
                payment.writeLineFields(into: &w)
                w.endObject()
            }
            w.endArray()
        case .product(let store, let productId, let type, _, _):
            w.field("type", "product")
            w.field("storeCode", store.rawValue)
            w.field("productId", productId)
            w.field("productType", type.rawValue)
        case .accountLink(let user, let store, let token):
            w.field("type", "accountLink")
            w.field("userId", user)
            w.field("storeCode", store.rawValue)
            w.field("appAccountToken", token)
        case .notification(let notification):
            preconditionFailure("a notification's line is the store's own text, not made here: \(notification.notificationId)")
        }
        w.endObject()
        return w.string
    }

    static func text(_ date: Date) -> String { Timestamp(date).iso8601Milliseconds }
}

extension Payment {
    /// The §2.1 fields of a purchase line.
    func writeLineFields(into w: inout JSONWriter) {
        w.field("userId", userId)
        w.field("storeCode", storeCode.rawValue)
        w.field("productId", productId)
        w.field("productType", productType.rawValue)
        w.field("price", price.text)
        w.field("currency", currency)
        w.field("paymentSeq", paymentSeq)
        w.field("purchaseToken", purchaseToken)
        w.field("transactionId", transactionId)
        w.field("originalTransactionId", originalTransactionId)
        w.field("purchaseTime", LedgerCommand.text(purchaseTime))
        w.field("expiryTime", expiryTime.map(LedgerCommand.text))
        if let payload { w.field("payload", payload) }
        w.field("sandboxPayment", sandboxPayment)
        w.field("promotionPayment", promotionPayment)
        if let productSeq { w.field("productSeq", Int(productSeq)) }
    }
}
