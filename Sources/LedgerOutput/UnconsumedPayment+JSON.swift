import Foundation
import LedgerJSON
import PurchaseLedger

extension UnconsumedPayment {
    /// Writes the element `ledger unconsumed --json` prints (docs/contract.md §3.1).
    public func write(into w: inout JSONWriter) {
        w.beginObject()
        writeFields(into: &w)
        w.endObject()
    }

    /// The object's fields, for this and for ``PaymentRecord``'s object.
    func writeFields(into w: inout JSONWriter) {
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
    }
}
