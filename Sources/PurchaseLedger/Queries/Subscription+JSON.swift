import Foundation
import LedgerJSON

extension Subscription {
    /// Writes the element `ledger subscriptions --json` prints (docs/contract.md §3.2).
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
