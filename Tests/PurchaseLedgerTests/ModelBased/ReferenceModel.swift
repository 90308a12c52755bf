import Foundation
import PurchaseLedger

/// A small, in-memory statement of the contract's write rules (docs/contract.md §2.1–§2.5 and the
/// `product` line of §5.4), written from the contract and not from the SQL: it answers each
/// command with the outcome the contract fixes and keeps what the queries of §3 read.
/// Commands are applied in order; there is no database, no concurrency and no time but the
/// commands' own.
struct ReferenceModel {
    /// A recorded payment and what happened to it since.
    struct PaymentState {
        var payment: Payment
        /// The first consume's time.
        var consumedAt: Date?
        /// The refund's own time.
        var refundedAt: Date?
    }

    /// A subscription lineage: `(storeCode, originalTransactionId)`.
    struct LineageKey: Hashable {
        var storeCode: StoreCode
        var originalTransactionId: String
    }

    /// Whose lineage it is and what it is for: set by its first recorded payment (§2.1).
    struct LineageState {
        var userId: String
        var productId: String
        var productType: ProductType
        /// Auto-renew turned off (a cancel, §2.5, or a store's notification) or back on, in the
        /// order recorded.
        var autoRenewChanges: [(time: Date, on: Bool)] = []
        /// The stores' billing states (docs/contract.md §3.2, §5.3; nil once a notification ended
        /// it), in the order recorded.
        var billingStates: [(time: Date, state: Subscription.Status?)] = []
    }

    struct TransactionKey: Hashable {
        var storeCode: StoreCode
        var transactionId: String
    }

    struct ProductKey: Hashable {
        var storeCode: StoreCode
        var productId: String
    }

    var payments: [String: PaymentState] = [:]
    var transactions: [TransactionKey: String] = [:]
    /// Notification ids received (and not refused).
    var notificationsSeen: Set<String> = []
    /// Notifications waiting for their payment, with the order they arrived in.
    var parked: [(notice: GoogleNotice, arrival: Int)] = []
    var lineages: [LineageKey: LineageState] = [:]
    private var products: [ProductKey: ProductType] = [:]

    /// Applies one command of a stream and returns the outcome the contract gives it.
    mutating func apply(_ item: StreamItem) -> ExpectedOutcome {
        if let notice = item.google { return notify(notice) }
        return apply(item.command)
    }

    /// Applies one command and returns the outcome the contract gives it.
    mutating func apply(_ command: LedgerCommand) -> ExpectedOutcome {
        switch command {
        case .record(let payment, _):
            return record(payment)
        case .consume(let seq, let user, let token, let time):
            return consume(seq, user: user, token: token, at: time ?? .distantPast)
        case .refund(let seq, let time, _):
            return refund(seq, at: time ?? .distantPast)
        case .cancel(let store, let original, let time):
            return cancel(LineageKey(storeCode: store, originalTransactionId: original), at: time ?? .distantPast)
        case .restore(let user, let store, _, let purchases):
            return restore(user: user, store: store, purchases)
        case .product(let store, let productId, let type, _, _):
            return declare(ProductKey(storeCode: store, productId: productId), type)
        case .notification, .accountLink:
            preconditionFailure("the model reads notifications from the stream's GoogleNotice; no account links: \(command)")
        }
    }

    // MARK: §2.1 purchase and renewal

    /// The idempotency rules, then the lineage's owner and product, else a new payment.
    mutating func record(_ payment: Payment) -> ExpectedOutcome {
        let seq = payment.paymentSeq
        let byName = payments[seq]?.payment
        let byTransaction = transactions[TransactionKey(storeCode: payment.storeCode, transactionId: payment.transactionId)]
            .flatMap { payments[$0]?.payment }
        if let known = byName ?? byTransaction {
            // The same store transaction under another paymentSeq.
            if known.paymentSeq != seq { return .refused(.paymentConflict, paymentSeq: seq) }
            if known.userId != payment.userId { return .refused(.userInvalid, paymentSeq: seq) }
            if known.productId != payment.productId { return .refused(.productInvalid, paymentSeq: seq) }
            if !Self.sameContent(known, payment) { return .refused(.paymentConflict, paymentSeq: seq) }
            return ExpectedOutcome(.duplicate, paymentSeq: seq)
        }
        if let lineage = payment.lineageId {
            let key = LineageKey(storeCode: payment.storeCode, originalTransactionId: lineage)
            if let owner = lineages[key] {
                if owner.userId != payment.userId { return .refused(.userInvalid, paymentSeq: seq) }
                if owner.productId != payment.productId || owner.productType != payment.productType {
                    return .refused(.productInvalid, paymentSeq: seq)
                }
            } else {
                lineages[key] = LineageState(userId: payment.userId, productId: payment.productId,
                                             productType: payment.productType)
            }
        }
        payments[seq] = PaymentState(payment: payment)
        transactions[TransactionKey(storeCode: payment.storeCode, transactionId: payment.transactionId)] = seq
        if payment.storeCode == .googlePlay { releaseParked(for: payment) }
        return ExpectedOutcome(.recorded, paymentSeq: seq)
    }

    /// "The same content": every field of §2.1 (user and product are checked before), a first
    /// purchase's absent `originalTransactionId` meaning its `transactionId`.
    static func sameContent(_ a: Payment, _ b: Payment) -> Bool {
        a.storeCode == b.storeCode && a.productType == b.productType && a.price.decimal == b.price.decimal
            && a.currency == b.currency && a.transactionId == b.transactionId
            && (a.originalTransactionId ?? a.transactionId) == (b.originalTransactionId ?? b.transactionId)
            && a.purchaseTime == b.purchaseTime && a.expiryTime == b.expiryTime && a.payload == b.payload
            && a.sandboxPayment == b.sandboxPayment && a.promotionPayment == b.promotionPayment
            && a.productSeq == b.productSeq && a.purchaseToken == b.purchaseToken
    }

    // MARK: §2.2 consume

    /// The refusals in the contract's order, then already consumed, then refunded.
    mutating func consume(_ seq: String, user: String, token: String?, at time: Date) -> ExpectedOutcome {
        guard let state = payments[seq] else { return .refused(.notFound, paymentSeq: seq) }
        if state.payment.userId != user { return .refused(.userInvalid, paymentSeq: seq) }
        if state.payment.purchaseToken != token { return .refused(.tokenInvalid, paymentSeq: seq) }
        if state.payment.productType == .autoRenewable { return .refused(.notConsumable, paymentSeq: seq) }
        if let first = state.consumedAt { return ExpectedOutcome(.alreadyConsumed, paymentSeq: seq, consumedAt: first) }
        if state.refundedAt != nil { return .refused(.refunded, paymentSeq: seq) }
        payments[seq]?.consumedAt = time
        return ExpectedOutcome(.consumed, paymentSeq: seq, consumedAt: time)
    }

    // MARK: §2.4 refund

    mutating func refund(_ seq: String, at time: Date) -> ExpectedOutcome {
        guard let state = payments[seq] else { return .refused(.notFound, paymentSeq: seq) }
        if state.refundedAt != nil { return ExpectedOutcome(.duplicate, paymentSeq: seq) }
        payments[seq]?.refundedAt = time
        return ExpectedOutcome(.recorded, paymentSeq: seq)
    }

    // MARK: §2.5 cancel

    /// `duplicate` when auto-renew is already off at the cancel's time (no payment after the
    /// cancel in force turned it back on); `NOT_FOUND` for an unknown lineage.
    mutating func cancel(_ key: LineageKey, at time: Date) -> ExpectedOutcome {
        guard lineages[key] != nil else { return .refused(.notFound) }
        if !autoRenewing(key, at: time) { return ExpectedOutcome(.duplicate) }
        lineages[key]?.autoRenewChanges.append((time, false))
        return ExpectedOutcome(.recorded)
    }

    /// Auto-renew at `instant`: as the latest change at or before it set it (of two at one
    /// time, the later recorded), except that a payment of the lineage made after a change that
    /// turned it off (and by the instant) turned it back on.
    func autoRenewing(_ key: LineageKey, at instant: Date) -> Bool {
        guard let lineage = lineages[key], let change = Self.latest(lineage.autoRenewChanges.map { ($0.time, $0.on) }, at: instant)
        else { return true }
        if change.value { return true }
        return lineagePayments(key).contains { $0.payment.purchaseTime > change.time && $0.payment.purchaseTime <= instant }
    }

    /// Of changes in the order recorded, the one in force at `instant`: the latest by time at or
    /// before it, the later recorded of two at one time.
    static func latest<T>(_ changes: [(Date, T)], at instant: Date) -> (time: Date, value: T)? {
        changes.enumerated().filter { $0.element.0 <= instant }
            .max { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }
            .map { ($0.element.0, $0.element.1) }
    }

    // MARK: §2.3 restore

    /// Every item by §2.1, all or nothing; the first refused item refuses the line with its code.
    mutating func restore(user: String, store: StoreCode, _ items: [Payment]) -> ExpectedOutcome {
        var trial = self
        var recorded: [String] = []
        for item in items {
            if item.userId != user || item.storeCode != store { return .refused(.invalidInput) }
            let outcome = trial.record(item)
            if let code = outcome.code { return .refused(code) }
            if outcome.status == .recorded { recorded.append(item.paymentSeq) }
        }
        self = trial
        let payments = lineages.filter { $0.key.storeCode == store && $0.value.userId == user }.keys
            .flatMap { lineagePayments($0) }
            .sorted { ($0.payment.purchaseTime, $0.payment.paymentSeq) < ($1.payment.purchaseTime, $1.payment.paymentSeq) }
            .map(\.payment.paymentSeq)
        return ExpectedOutcome(.restored, recorded: recorded, payments: payments)
    }

    // MARK: §5.4 product

    /// `duplicate` when unchanged; `PRODUCT_INVALID` when payments of it have another type.
    mutating func declare(_ key: ProductKey, _ type: ProductType) -> ExpectedOutcome {
        if products[key] == type { return ExpectedOutcome(.duplicate) }
        if payments.values.contains(where: {
            $0.payment.storeCode == key.storeCode && $0.payment.productId == key.productId && $0.payment.productType != type
        }) {
            return .refused(.productInvalid)
        }
        products[key] = type
        return ExpectedOutcome(.recorded)
    }

    /// The payments of a lineage, in no particular order.
    func lineagePayments(_ key: LineageKey) -> [PaymentState] {
        payments.values.filter {
            $0.payment.storeCode == key.storeCode && $0.payment.lineageId == key.originalTransactionId
        }
    }
}
