import Foundation

/// What the ledger answered to one command (docs/contract.md §2.6).
public struct CommandOutcome: Sendable, Hashable {
    /// The contract's statuses.
    public enum Status: String, Sendable, Hashable {
        case recorded, duplicate, consumed, alreadyConsumed, restored, ignored, parked, rejected
    }

    public var status: Status
    /// The payment the command was about, when there is one.
    public var paymentSeq: String?
    /// The lineage of a cancel.
    public var originalTransactionId: String?
    /// When the payment was consumed: the first consume's time.
    public var consumedAt: Date?
    /// A restore's newly recorded payments, in input order.
    public var recorded: [String]?
    /// A restore's subscription payments of that user and store.
    public var payments: [String]?
    /// Why the command was refused.
    public var error: LedgerError?
    /// The store notification's id (`notificationUUID` or `messageId`), for a notification.
    public var notificationId: String?

    public init(status: Status, paymentSeq: String? = nil, originalTransactionId: String? = nil,
                consumedAt: Date? = nil, recorded: [String]? = nil, payments: [String]? = nil,
                error: LedgerError? = nil) {
        self.status = status
        self.paymentSeq = paymentSeq
        self.originalTransactionId = originalTransactionId
        self.consumedAt = consumedAt
        self.recorded = recorded
        self.payments = payments
        self.error = error
    }

    /// A refusal.
    public init(rejected error: LedgerError) {
        self.init(status: .rejected, paymentSeq: error.paymentSeq, error: error)
    }

    /// Throws the refusal, if this is one.
    public func get() throws(LedgerError) -> CommandOutcome {
        if let error { throw error }
        return self
    }
}
