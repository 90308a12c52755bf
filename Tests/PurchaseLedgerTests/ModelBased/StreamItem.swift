import Foundation
import PurchaseLedger

/// One command of a generated stream: the library's command, the `ledger ingest` line that
/// means it, and for a Google Play notification what the store said, which the model reads
/// (rather than the library's decoding of it).
struct StreamItem: Sendable {
    var command: LedgerCommand
    var line: String
    var google: GoogleNotice?

    init(_ command: LedgerCommand) {
        self.command = command
        line = command.ndjsonLine
        google = nil
    }

    init(_ notice: GoogleNotice) {
        line = notice.line
        google = notice
        do {
            command = try LedgerCommand(line: Array(notice.line.utf8), stores: GoogleNotice.stores)
        } catch {
            preconditionFailure("the generator made a notification the decoder refuses: \(error): \(notice.line)")
        }
    }
}

/// A Google Play real-time developer notification (docs/contract.md §5.3) as the generator made it.
struct GoogleNotice: Sendable, Hashable {
    /// What the `DeveloperNotification` holds.
    enum Kind: Sendable, Hashable {
        /// `subscriptionNotification` with this `notificationType`, no payment attached.
        case subscription(Int)
        /// `voidedPurchaseNotification` of this order.
        case voided(orderId: String)
        /// `testNotification`.
        case test
    }

    static let packageName = "com.example.game"
    /// The configuration that accepts the generated notifications.
    static let stores = StoreConfiguration(googlePackageNames: [packageName])

    var messageId: String
    var kind: Kind
    var purchaseToken: String
    var eventTime: Date

    /// The Pub/Sub push body as an ingest line (`type` added).
    var line: String {
        let body: String
        switch kind {
        case .subscription(let type):
            body = #""subscriptionNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"\#(purchaseToken)","subscriptionId":"sub"}"#
        case .voided(let orderId):
            body = #""voidedPurchaseNotification":{"purchaseToken":"\#(purchaseToken)","orderId":"\#(orderId)","productType":2,"refundType":1}"#
        case .test:
            body = #""testNotification":{"version":"1.0"}"#
        }
        let millis = Int64(eventTime.timeIntervalSince1970 * 1000)
        let notification = #"{"version":"1.0","packageName":"\#(Self.packageName)","eventTimeMillis":"\#(millis)",\#(body)}"#
        let data = Data(notification.utf8).base64EncodedString()
        return #"{"type":"googleNotification","message":{"data":"\#(data)","messageId":"\#(messageId)","publishTime":"2026-01-01T00:00:00Z"},"subscription":"projects/p/subscriptions/play"}"#
    }

    /// The keys it shares with the payments it may reach: its token, its order.
    var partitionKeys: [String] {
        var keys = ["notification:GG:\(messageId)", "gtoken:\(purchaseToken)"]
        if case .voided(let orderId) = kind { keys.append("transaction:GG:\(orderId)") }
        return keys
    }
}
