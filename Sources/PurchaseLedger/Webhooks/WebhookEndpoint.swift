import Foundation

/// A receiver of the ledger's webhooks, as `ledger webhooks list` shows it: never its secret.
public struct WebhookEndpoint: Sendable, Hashable {
    public var id: Int64
    public var url: String
    /// The types it receives; nil: every one.
    public var eventTypes: [String]?
    public var createdAt: Date
    /// The last log position it has read in node group 0's order (its deliveries up to there are
    /// written): on one server, and on a cluster whose commands run through its coordinator, its
    /// whole place in the log.
    public var position: Int64
    /// Its place in the log: the last position read in each node group's order (``EventCursor``),
    /// which ``position`` is group 0's part of.
    public var cursor: EventCursor
    /// Deliveries not yet made (running, waiting their turn or retrying).
    public var undelivered: Int
    /// Deliveries that failed for good (`ledger webhooks replay` sends them again).
    public var failed: Int
    public var delivered: Int
    /// When the oldest delivery not yet made was prepared.
    public var oldestUndelivered: Date?

    /// What an endpoint may receive: every event type of the log, and the two changes the ledger
    /// derives (a subscription becoming entitled or not, at an event or at an instant passing).
    public static let eventTypes: [String] = EventType.allCases.map(\.rawValue) + WebhookChange.allCases.map(\.rawValue)
}

/// A change the ledger derives for webhooks: a subscription lineage becoming entitled (active or
/// in its grace period, docs/contract.md §3.2) or no longer entitled, because of an event or
/// because an instant passed (an expiry, a grace period's end) with no event.
public enum WebhookChange: String, Sendable, Hashable, CaseIterable {
    case subscriptionEntitled = "SubscriptionEntitled"
    case subscriptionNotEntitled = "SubscriptionNotEntitled"
}
