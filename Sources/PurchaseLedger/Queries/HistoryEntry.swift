import Foundation

/// One event of a user's history (``Ledger/history(userId:limit:)``, `GET /v1/users/{userId}/history`,
/// `ledger history`): what changed, when, and the store calls it caused. Never a purchase token
/// nor its digest. Schema/definitions/queries/user_history.sql says which events are the user's.
public struct HistoryEntry: Sendable, Hashable {
    /// The event's position in the log.
    public var position: Int64
    /// The event's own time (a purchase's purchaseTime, a notification's signed time).
    public var occurredAt: Date
    /// When the ledger appended it.
    public var recordedAt: Date
    public var stream: String
    /// The event's type (Schema/EVENTS.md).
    public var type: EventType
    /// What it changed, for programs: `recorded`, `renewed`, `consumed`, `refunded`,
    /// `refundReversed`, `expiryExtended`, `linked`, `autoRenewCancelled`, `autoRenewEnabled`,
    /// `billingState:<state>`, `restored`, `accountLinked`, `notification:<outcome>` (`applied`,
    /// `ignored`, `parked`, `asked`) or `released`.
    public var change: String
    /// What it changed, in one line for people.
    public var summary: String
    public var storeCode: StoreCode?
    public var paymentSeq: String?
    public var originalTransactionId: String?
    /// The store's id of the notification the event is or came from.
    public var notificationId: String?
    /// The jobs the event caused (calls to a store's API, webhook deliveries), by id.
    public var jobs: [Job]

    /// A job an event caused (`ledger.jobs`, docs/store-apis.md).
    public struct Job: Sendable, Hashable {
        public var id: Int64
        /// `google.subscription`, `google.product`, `google.acknowledge`, `webhook.delivery`, ...
        public var kind: String
        /// `pending`, `waiting`, `done` or `failed`.
        public var state: String
        /// What its effect answered (`recorded`, `duplicate`, `parked`, ...), once done.
        public var outcome: String?
    }
}

/// A user's history: the latest entries in time order, and whether older ones were left out.
public struct UserHistory: Sendable, Hashable {
    /// In time order: occurredAt, then position.
    public var entries: [HistoryEntry]
    /// True when the user has more entries than the limit asked for: the oldest are left out.
    public var truncated: Bool
}
