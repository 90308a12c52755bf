import Foundation
import PurchaseLedger

extension Date {
    /// The time as the ledger prints it (`Timestamp(clamping:)`, milliseconds, UTC), for
    /// assertions on what a command or a query shows.
    public var ledgerText: String {
        Timestamp(clamping: self).iso8601Milliseconds
    }
}
