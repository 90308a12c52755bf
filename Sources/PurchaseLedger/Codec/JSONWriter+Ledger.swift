import Foundation
import LedgerJSON

extension JSONWriter {
    /// A time as the ledger prints it (``Timestamp/init(clamping:)``), or null.
    public mutating func field(_ key: String, _ date: Date?) {
        field(key, date.map { Timestamp(clamping: $0).iso8601Milliseconds })
    }

    public mutating func stringArray(_ key: String, _ values: [String]) {
        self.key(key)
        beginArray()
        for value in values { string(value) }
        endArray()
    }
}
