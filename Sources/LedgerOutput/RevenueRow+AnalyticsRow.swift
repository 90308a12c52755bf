import Foundation
import PurchaseLedger

extension RevenueRow: AnalyticsRow {
    /// The column names, in order.
    public static let columns = ["period", "storeCode", "currency", "payments", "gross", "refunds", "net"]

    /// The cells, in the order of `columns`.
    public var values: [AnalyticsValue] {
        [.text(period.description), .text(storeCode.rawValue), .text(currency), .count(payments),
         .decimal(gross), .decimal(refunds), .decimal(net)]
    }
}
