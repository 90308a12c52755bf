import Foundation
import PurchaseLedger

/// The part of a command's outcome the contract fixes (docs/contract.md §2.6): its status, the error
/// code of a refusal, the payment it names, the first consume's time, a restore's lists, and a
/// notification's id.
/// The model computes one per command; the ledger's `CommandOutcome` is read into the same shape.
struct ExpectedOutcome: Hashable, CustomStringConvertible {
    var status: CommandOutcome.Status
    var code: LedgerError.Code?
    var paymentSeq: String?
    var consumedAt: Date?
    var recorded: [String]?
    var payments: [String]?
    var notificationId: String?

    init(_ status: CommandOutcome.Status, paymentSeq: String? = nil, consumedAt: Date? = nil,
         recorded: [String]? = nil, payments: [String]? = nil, notificationId: String? = nil) {
        self.status = status
        self.notificationId = notificationId
        self.paymentSeq = paymentSeq
        self.consumedAt = consumedAt
        self.recorded = recorded
        self.payments = payments
    }

    /// A refusal with the contract's code.
    static func refused(_ code: LedgerError.Code, paymentSeq: String? = nil) -> ExpectedOutcome {
        var outcome = ExpectedOutcome(.rejected, paymentSeq: paymentSeq)
        outcome.code = code
        return outcome
    }

    /// What the ledger answered, in the same shape.
    init(observed outcome: CommandOutcome) {
        self.init(outcome.status, paymentSeq: outcome.paymentSeq,
                  consumedAt: outcome.status == .consumed || outcome.status == .alreadyConsumed ? outcome.consumedAt : nil,
                  recorded: outcome.recorded, payments: outcome.payments, notificationId: outcome.notificationId)
        code = outcome.error?.code
    }

    var description: String {
        var parts = [status.rawValue]
        if let code { parts.append(code.rawValue) }
        if let paymentSeq { parts.append("paymentSeq=\(paymentSeq)") }
        if let consumedAt { parts.append("consumedAt=\(Timestamp(consumedAt).iso8601Milliseconds)") }
        if let recorded { parts.append("recorded=\(recorded)") }
        if let payments { parts.append("payments=\(payments)") }
        if let notificationId { parts.append("notificationId=\(notificationId)") }
        return parts.joined(separator: " ")
    }
}

/// One row of `unconsumed` (docs/contract.md §3.1), every field the contract lists.
struct UnconsumedRow: Hashable, CustomStringConvertible {
    var userId, storeCode, productId, productType, price, currency, paymentSeq, transactionId: String
    var originalTransactionId: String?
    var purchaseTime: Date
    var expiryTime: Date?
    var payload: String?
    var sandboxPayment, promotionPayment: Bool

    init(_ p: UnconsumedPayment) {
        userId = p.userId; storeCode = p.storeCode.rawValue; productId = p.productId
        productType = p.productType.rawValue; price = p.price.text; currency = p.currency
        paymentSeq = p.paymentSeq; transactionId = p.transactionId
        originalTransactionId = p.originalTransactionId; purchaseTime = p.purchaseTime
        expiryTime = p.expiryTime; payload = p.payload
        sandboxPayment = p.sandboxPayment; promotionPayment = p.promotionPayment
    }

    /// The row the contract says a payment gives: a subscription payment shows its lineage.
    init(_ p: Payment) {
        userId = p.userId; storeCode = p.storeCode.rawValue; productId = p.productId
        productType = p.productType.rawValue; price = p.price.text; currency = p.currency
        paymentSeq = p.paymentSeq; transactionId = p.transactionId
        originalTransactionId = p.lineageId ?? p.originalTransactionId; purchaseTime = p.purchaseTime
        expiryTime = p.expiryTime; payload = p.payload
        sandboxPayment = p.sandboxPayment; promotionPayment = p.promotionPayment
    }

    var description: String { "\(paymentSeq)(\(storeCode) \(productId) \(price) \(Timestamp(purchaseTime).iso8601Milliseconds))" }
}

/// One row of `subscriptions --include-expired` at an instant (docs/contract.md §3.2).
struct SubscriptionRow: Hashable, CustomStringConvertible {
    var userId, storeCode, productId, productType, originalTransactionId, latestPaymentSeq: String
    var purchaseTime: Date
    var expiryTime: Date?
    var autoRenewing: Bool
    var status: Subscription.Status
    var entitled: Bool
    /// Set only while `inGracePeriod` with a known end (the App Store's; Google's has none).
    var gracePeriodExpiryTime: Date?

    init(userId: String, storeCode: String, productId: String, productType: String, originalTransactionId: String,
         latestPaymentSeq: String, purchaseTime: Date, expiryTime: Date?, autoRenewing: Bool,
         status: Subscription.Status) {
        self.userId = userId; self.storeCode = storeCode; self.productId = productId
        self.productType = productType; self.originalTransactionId = originalTransactionId
        self.latestPaymentSeq = latestPaymentSeq; self.purchaseTime = purchaseTime; self.expiryTime = expiryTime
        self.autoRenewing = autoRenewing; self.status = status
        entitled = status == .active || status == .inGracePeriod
    }

    init(_ s: Subscription) {
        self.init(userId: s.userId, storeCode: s.storeCode.rawValue, productId: s.productId,
                  productType: s.productType.rawValue, originalTransactionId: s.originalTransactionId,
                  latestPaymentSeq: s.latestPaymentSeq, purchaseTime: s.purchaseTime, expiryTime: s.expiryTime,
                  autoRenewing: s.autoRenewing, status: s.status)
        entitled = s.entitled
        gracePeriodExpiryTime = s.gracePeriodExpiryTime
    }

    var description: String {
        "\(storeCode):\(originalTransactionId)(\(productId) \(status.rawValue) latest=\(latestPaymentSeq) "
            + "expiry=\(expiryTime.map { Timestamp($0).iso8601Milliseconds } ?? "null") autoRenewing=\(autoRenewing) entitled=\(entitled)"
            + (gracePeriodExpiryTime.map { " graceUntil=\(Timestamp($0).iso8601Milliseconds)" } ?? "") + ")"
    }
}
