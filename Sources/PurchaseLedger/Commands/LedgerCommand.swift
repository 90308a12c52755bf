import Foundation

/// Whether a payment starts its lineage or renews it.
public enum PaymentKind: String, Sendable, Hashable {
    case purchase
    case renewal
}

/// One contract command (docs/contract.md §2), decoded and validated.
public enum LedgerCommand: Sendable, Hashable {
    /// A purchase or a renewal.
    case record(Payment, kind: PaymentKind)
    /// Hand out a payment's goods; `time` nil means now. `purchaseToken` nil: the payment was
    /// learned from a store notification and has no token (docs/contract.md §5.2).
    case consume(paymentSeq: String, userId: String, purchaseToken: String?, time: Date?)
    /// Record what the store restored for a user; `time` nil means now.
    case restore(userId: String, storeCode: StoreCode, time: Date?, purchases: [Payment])
    /// A refund, revocation or voided purchase.
    case refund(paymentSeq: String, time: Date?, reason: String?)
    /// The user turned auto-renew off.
    case cancel(storeCode: StoreCode, originalTransactionId: String, time: Date?)
    /// A verified App Store or Google Play notification (docs/contract.md §5).
    case notification(StoreNotification)
    /// The type of a store product, and optionally its price (`product` line, §5.4 and §6.3).
    case product(storeCode: StoreCode, productId: String, productType: ProductType, price: Price? = nil, currency: String? = nil)
    /// Notifications carrying `appAccountToken` (App Store) or payments the Play Developer API
    /// describes with that `obfuscatedExternalAccountId` belong to `userId` (`accountLink` line,
    /// §5.4 and §6.3).
    case accountLink(userId: String, storeCode: StoreCode, appAccountToken: String)

    /// The payment the command is about, when there is one.
    public var paymentSeq: String? {
        switch self {
        case .record(let payment, _): payment.paymentSeq
        case .consume(let seq, _, _, _), .refund(let seq, _, _): seq
        case .restore, .cancel, .notification, .product, .accountLink: nil
        }
    }

    /// The store notification's id, for a notification.
    public var notificationId: String? {
        if case .notification(let notification) = self { return notification.notificationId }
        return nil
    }

    /// Whether running the command twice has the effect of running it once, so that a batch
    /// whose outcome is unknown (the connection died at commit) may be sent again. A consume
    /// is not: its second run would answer `alreadyConsumed` and the goods would be lost.
    public var isIdempotent: Bool {
        if case .consume = self { return false }
        return true
    }
}
