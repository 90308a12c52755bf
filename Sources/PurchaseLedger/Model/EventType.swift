/// The type of an event in `ledger.events` (`Schema/EVENTS.md` documents each one's stream and
/// data). The ledger's SQL functions append them; readers of the log, such as a
/// ``CatchUpReader`` consumer, switch over them.
public enum EventType: String, CaseIterable, Sendable, Hashable {
    case purchaseRecorded = "PurchaseRecorded"
    case renewalRecorded = "RenewalRecorded"
    case paymentConsumed = "PaymentConsumed"
    case paymentRefunded = "PaymentRefunded"
    case refundReversed = "RefundReversed"
    case expiryExtended = "ExpiryExtended"
    case paymentLinked = "PaymentLinked"
    case autoRenewCancelled = "AutoRenewCancelled"
    case autoRenewEnabled = "AutoRenewEnabled"
    case billingStateChanged = "BillingStateChanged"
    case purchasesRestored = "PurchasesRestored"
    case productDeclared = "ProductDeclared"
    case accountLinked = "AccountLinked"
    case notificationReceived = "NotificationReceived"
    case notificationReleased = "NotificationReleased"

    /// The prefix of the streams its events are appended to (`payment:`, `lineage:`...).
    public var streamPrefix: String {
        switch self {
        case .purchaseRecorded, .renewalRecorded, .paymentConsumed, .paymentRefunded, .refundReversed,
             .expiryExtended, .paymentLinked: "payment:"
        case .autoRenewCancelled, .autoRenewEnabled, .billingStateChanged: "lineage:"
        case .purchasesRestored: "restore:"
        case .productDeclared: "product:"
        case .accountLinked: "account:"
        case .notificationReceived, .notificationReleased: "notification:"
        }
    }
}
