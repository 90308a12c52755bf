import Foundation
import PurchaseLedger

extension Date {
    /// The time as the ledger prints every time, `2026-01-01T00:00:00.000Z` (UTC, milliseconds,
    /// clamped to the years 0001-9999 so it is always accepted back): the library's
    /// `Timestamp(clamping:)` and `iso8601Milliseconds`, spelled once for the tables.
    var ledgerText: String {
        Timestamp(clamping: self).iso8601Milliseconds
    }
}
