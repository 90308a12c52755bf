import Foundation
import PurchaseLedger

extension RefundsRow: AnalyticsRow {
    /// The column names, in order.
    public static let columns = ["period", "storeCode", "currency", "refunds", "amount",
                                 "refundsAfterConsume", "amountAfterConsume"]

    /// The cells, in the order of `columns`.
    public var values: [AnalyticsValue] {
        [.text(period.description), .text(storeCode.rawValue), .text(currency), .count(refunds), .decimal(amount),
         .count(refundsAfterConsume), .decimal(amountAfterConsume)]
    }
}
