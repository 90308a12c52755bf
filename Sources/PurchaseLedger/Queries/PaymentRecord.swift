import Foundation

/// One payment as the ledger holds it, whatever its state: what a support agent or a backend
/// asks about an order or a transaction id (``Ledger/lookup(_:)``, `GET /v1/lookup`). Never its
/// purchase token.
public struct PaymentRecord: Sendable, Hashable {
    /// Its fields, as `ledger unconsumed` lists a payment (the type is named for that list). Its
    /// `expiryTime` is the later one a store extended it to, when one did.
    public var payment: UnconsumedPayment
    /// `purchase` or `renewal`.
    public var kind: String
    /// Whether it was first learned from a store notification (no SDK line has named it with a
    /// token yet) rather than from the backend.
    public var fromStore: Bool
    public var recordedAt: Date
    public var consumedAt: Date?
    public var refundedAt: Date?
    public var refundReason: String?
}

/// How to find a payment (``Ledger/lookup(_:)``).
public enum PaymentKey: Sendable, Hashable {
    /// Its `paymentSeq`, or an alias of it (the name an SDK line gave a payment first learned
    /// from a store notification).
    case paymentSeq(String)
    /// The store's transaction id (for Google Play, the order id `GPA.…`).
    case transaction(StoreCode, String)
}
