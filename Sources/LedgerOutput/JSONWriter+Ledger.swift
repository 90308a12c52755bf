import Foundation
import LedgerJSON
import PurchaseLedger

extension JSONWriter {
    /// A time as the ledger prints it (``Timestamp/init(clamping:)``), or null.
    mutating func field(_ key: String, _ date: Date?) {
        field(key, date.map { Timestamp(clamping: $0).iso8601Milliseconds })
    }

    mutating func stringArray(_ key: String, _ values: [String]) {
        self.key(key)
        beginArray()
        for value in values { string(value) }
        endArray()
    }
}
