import Foundation
import PurchaseLedger

extension ChurnRow: AnalyticsRow {
    /// The column names, in order.
    public static let columns = ["period", "storeCode", "productId", "started", "renewed", "churned",
                                 "churnedVoluntary", "churnedInvoluntary", "revoked"]

    /// The cells, in the order of `columns`.
    public var values: [AnalyticsValue] {
        [.text(period.description), .text(storeCode.rawValue), .text(productId), .count(started), .count(renewed),
         .count(churned), .count(churnedVoluntary), .count(churnedInvoluntary), .count(revoked)]
    }
}
