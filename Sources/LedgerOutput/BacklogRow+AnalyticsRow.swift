import Foundation
import PurchaseLedger

extension BacklogRow: AnalyticsRow {
    /// The column names, in order.
    public static let columns = ["storeCode", "productId", "unconsumed", "oldestPurchaseTime",
                                 "medianAgeSeconds", "p95AgeSeconds"]

    /// The cells, in the order of `columns`.
    public var values: [AnalyticsValue] {
        [.text(storeCode.rawValue), .text(productId), .count(unconsumed), .time(oldestPurchaseTime),
         .count(medianAgeSeconds), .count(p95AgeSeconds)]
    }
}
