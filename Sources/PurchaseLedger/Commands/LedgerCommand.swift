import Foundation

/// Whether a payment starts its lineage or renews it.
public enum PaymentKind: String, Sendable, Hashable {
    case purchase
    case renewal
}

/// One contract command (CONTRACT.md §2), decoded and validated.
public enum LedgerCommand: Sendable, Hashable {
    /// A purchase or a renewal.
    case record(Payment, kind: PaymentKind)
    /// Hand out a payment's goods; `time` nil means now.
    case consume(paymentSeq: String, userId: String, purchaseToken: String, time: Date?)
    /// Record what the store restored for a user; `time` nil means now.
    case restore(userId: String, storeCode: StoreCode, time: Date?, purchases: [Payment])
    /// A refund, revocation or voided purchase.
    case refund(paymentSeq: String, time: Date?, reason: String?)
    /// The user turned auto-renew off.
    case cancel(storeCode: StoreCode, originalTransactionId: String, time: Date?)

    /// The payment the command is about, when there is one.
    public var paymentSeq: String? {
        switch self {
        case .record(let payment, _): payment.paymentSeq
        case .consume(let seq, _, _, _), .refund(let seq, _, _): seq
        case .restore, .cancel: nil
        }
    }

    /// Whether running the command twice has the effect of running it once, so that a batch
    /// whose outcome is unknown (the connection died at commit) may be sent again. A consume
    /// is not: its second run would answer `alreadyConsumed` and the goods would be lost.
    public var isIdempotent: Bool {
        if case .consume = self { return false }
        return true
    }
}
