import Foundation
import PurchaseLedger

extension SubscribersRow: AnalyticsRow {
    /// The column names, in order.
    public static let columns = ["period", "storeCode", "productId", "active"]

    /// The cells, in the order of `columns`.
    public var values: [AnalyticsValue] {
        [.text(period.description), .text(storeCode.rawValue), .text(productId), .count(active)]
    }
}
