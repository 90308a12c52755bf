import Foundation
import PurchaseLedger

/// Makes a random stream of contract commands from a seed: purchases, subscription payments
/// delivered out of order, consumes (of unknown payments, by the wrong user or token, twice),
/// refunds, cancels, restores, product declarations and Google Play notifications (auto-renew,
/// billing states, revocations, voided purchases, tests; about payments not yet known, so
/// parked), with exact retries and conflicts (the
/// same paymentSeq with another user, product, price, token or time; the same store transaction
/// under another paymentSeq; a lineage's payment by another user or for another product).
///
/// Users come in small groups (think: one game each, with its own catalogue); every command
/// that names two users or a product keeps within one group, so the stream still falls apart
/// into independent parts (``WriterPartition``) for concurrent writers. The generator knows
/// nothing of the rules: what each command does is for the ``ReferenceModel`` to say.
struct CommandStreamGenerator {
    /// A subscription lineage the generator plans to deliver, one payment per period.
    struct LineagePlan {
        var storeCode: StoreCode
        var originalTransactionId: String
        var userId: String
        var payments: [Payment]
        /// Indices of the payments not yet delivered.
        var pending: [Int]
        var start: Date
        var end: Date
    }

    /// 2026-01-01T00:00:00Z: every time in the stream is within a year after it, in whole seconds.
    static let epoch = Date(timeIntervalSince1970: 1_767_225_600)
    static let day: TimeInterval = 86_400

    var random: StreamRandom
    private let groups: [[String]]
    var issued: [Payment] = []
    var plans: [LineagePlan] = []
    private var emitted: [StreamItem] = []
    private var serial = 0

    /// - Parameters:
    ///   - seed: the only source of randomness.
    ///   - groups: how many groups of users.
    ///   - usersPerGroup: users in each group.
    init(seed: UInt64, groups: Int = 12, usersPerGroup: Int = 2) {
        random = StreamRandom(seed: seed)
        self.groups = (0..<groups).map { g in (0..<usersPerGroup).map { u in "G\(g)U\(u)" } }
    }

    /// Every user the stream may name.
    var users: [String] { groups.flatMap { $0 } }

    /// The stream: `count` commands.
    mutating func generate(count: Int) -> [StreamItem] {
        emitted.reserveCapacity(count)
        while emitted.count < count {
            let kind = random.weighted([18, 22, 8, 10, 18, 8, 6, 5, 3, 10])
            let command: LedgerCommand?
            if kind == 9 {  // CommandStreamGenerator+Notifications.swift
                if let notice = googleNotification() { emitted.append(StreamItem(notice)) }
                continue
            }
            if kind == 2 {
                if let item = retry() { emitted.append(item) }
                continue
            }
            switch kind {
            case 0: command = newConsumable()
            case 1: command = lineagePayment()
            case 3: command = conflict()
            case 4: command = consume()
            case 5: command = refund()
            case 6: command = cancel()
            case 7: command = restore()
            default: command = product()
            }
            if let command { emitted.append(StreamItem(command)) }
        }
        return emitted
    }

    // MARK: Catalogue

    /// The group's products and their types: each group sells its own.
    static func catalogue(group: String) -> [(productId: String, type: ProductType)] {
        [("gem100\(group)", .consumable), ("gem500\(group)", .consumable), ("vipmonth\(group)", .autoRenewable),
         ("vipyear\(group)", .autoRenewable), ("coinsmonth\(group)", .consumableAutoRenewable)]
    }

    /// `G3U1` → `G3`.
    static func group(of user: String) -> String { String(user.prefix { $0 != "U" }) }

    private func usersOfGroup(of user: String) -> [String] {
        groups.first { $0.contains(user) } ?? [user]
    }

    mutating func nextSerial() -> String {
        serial += 1
        return String(format: "%04d", serial)
    }

    mutating func time(after start: Date, within days: Int) -> Date {
        start.addingTimeInterval(TimeInterval(random.int(60...(days * 86_400))))
    }

    private mutating func store() -> StoreCode { random.chance(0.5) ? .appStore : .googlePlay }

    // MARK: Payments

    private mutating func newConsumable() -> LedgerCommand {
        let user = random.pick(users) ?? "G0U0"
        let products = Self.catalogue(group: Self.group(of: user)).filter { $0.type == .consumable }
        let n = nextSerial()
        let payment = Payment(
            userId: user, storeCode: store(), productId: random.pick(products)?.productId ?? "gem100",
            productType: .consumable, price: random.pick(["0.99", "4.99", "9.99", "19.99", "0"]).map { Price(stringLiteral: $0) } ?? "0.99",
            currency: random.chance(0.8) ? "USD" : "EUR", paymentSeq: "C\(n)", purchaseToken: "tokC\(n)",
            transactionId: "TC\(n)", purchaseTime: time(after: Self.epoch, within: 180),
            payload: random.chance(0.3) ? "character-\(random.int(1...9))" : nil,
            sandboxPayment: random.chance(0.1), promotionPayment: random.chance(0.1),
            productSeq: random.chance(0.2) ? Int64(random.int(1...99)) : nil)
        issued.append(payment)
        return .record(payment, kind: .purchase)
    }

    /// A new lineage's plan: one to four 30-day periods, renewals charged up to a day early.
    private mutating func newPlan() -> LineagePlan {
        let user = random.pick(users) ?? "G0U0"
        let products = Self.catalogue(group: Self.group(of: user)).filter { $0.type != .consumable }
        let product = random.pick(products) ?? products[0]
        let n = nextSerial()
        let storeCode = store()
        let start = time(after: Self.epoch, within: 150)
        let periods = random.int(1...4)
        let period = 30 * Self.day
        let payments = (0..<periods).map { i in
            let early = i == 0 ? 0 : TimeInterval(random.int(0...86_000))
            return Payment(
                userId: user, storeCode: storeCode, productId: product.productId, productType: product.type,
                price: product.type == .autoRenewable ? "4.99" : "2.99", currency: "USD",
                // Google Play mostly keeps one token for a subscription's payments; now and then a
                // renewal holds another (a resubscribe or an upgrade gives a new token), so a
                // REVOKED of the first token must still refund the lineage's latest payment.
                paymentSeq: "S\(n)R\(i)",
                purchaseToken: storeCode == .googlePlay ? (i > 0 && random.chance(0.5) ? "gtokS\(n)R\(i)" : "gtokS\(n)")
                    : "tokS\(n)R\(i)",
                transactionId: i == 0 ? "L\(n)" : "L\(n)R\(i)",
                originalTransactionId: i == 0 ? (random.chance(0.3) ? "L\(n)" : nil) : "L\(n)",
                purchaseTime: start.addingTimeInterval(TimeInterval(i) * period - early),
                expiryTime: start.addingTimeInterval(TimeInterval(i + 1) * period),
                sandboxPayment: random.chance(0.05))
        }
        return LineagePlan(storeCode: storeCode, originalTransactionId: "L\(n)", userId: user, payments: payments,
                           pending: Array(payments.indices), start: start,
                           end: start.addingTimeInterval(TimeInterval(periods) * period))
    }

    /// The next payment of a lineage: mostly the earliest not yet delivered, sometimes a later one
    /// (a renewal before its first purchase or before the renewal it follows).
    private mutating func lineagePayment() -> LedgerCommand {
        let open = plans.indices.filter { !plans[$0].pending.isEmpty }
        let index: Int
        if open.isEmpty || random.chance(0.3) {
            plans.append(newPlan())
            index = plans.count - 1
        } else {
            index = random.pick(open) ?? 0
        }
        let pending = plans[index].pending
        let slot = random.chance(0.65) ? 0 : random.int(0...(pending.count - 1))
        let paymentIndex = pending[slot]
        plans[index].pending.remove(at: slot)
        let payment = plans[index].payments[paymentIndex]
        issued.append(payment)
        return .record(payment, kind: paymentIndex == 0 ? .purchase : .renewal)
    }

    /// An exact retry of an earlier command: a record, a consume, a refund, a cancel, a restore
    /// or a notification.
    private mutating func retry() -> StreamItem? {
        random.pick(emitted.filter { if case .product = $0.command { false } else { true } })
    }

    /// A record that clashes with a payment issued before (which may or may not be recorded).
    private mutating func conflict() -> LedgerCommand? {
        guard let base = random.pick(issued) else { return nil }
        var payment = base
        let others = usersOfGroup(of: base.userId).filter { $0 != base.userId }
        let catalogue = Self.catalogue(group: Self.group(of: base.userId))
        let n = nextSerial()
        switch random.int(0...7) {
        case 0: payment.userId = random.pick(others) ?? base.userId + "X"
        case 1:
            // Another product of the same type (the same type keeps the refusal about the product).
            let sameType = catalogue.filter { $0.type == base.productType && $0.productId != base.productId }
            payment.productId = sameType.first?.productId ?? "other" + base.productId
        case 2: payment.price = base.price.text == "0.99" ? "1.99" : "0.99"
        case 3: payment.purchaseToken = "tokX\(n)"
        case 4: payment.purchaseTime = base.purchaseTime.addingTimeInterval(3_600)
        case 5:
            // The same store transaction under another paymentSeq.
            payment.paymentSeq = "X\(n)"
            payment.purchaseToken = "tokX\(n)"
        case 6, 7:
            guard let lineage = base.lineageId else { return nil }
            // A new payment of the lineage, by another user or for another product.
            payment.paymentSeq = "X\(n)"
            payment.purchaseToken = "tokX\(n)"
            payment.transactionId = "TX\(n)"
            payment.originalTransactionId = lineage
            payment.purchaseTime = base.purchaseTime.addingTimeInterval(7 * Self.day)
            payment.expiryTime = base.expiryTime.map { $0.addingTimeInterval(7 * Self.day) }
            if random.chance(0.5), let other = random.pick(others) {
                payment.userId = other
            } else if let product = random.pick(catalogue.filter({ $0.type.isSubscription && $0.productId != base.productId })) {
                payment.productId = product.productId
                payment.productType = product.type
            }
        default: return nil
        }
        issued.append(payment)
        return .record(payment, kind: payment.isRenewal ? .renewal : .purchase)
    }

    // MARK: Consume, refund, cancel

    private mutating func consume() -> LedgerCommand? {
        if random.chance(0.06) {
            return .consume(paymentSeq: "NOPE\(nextSerial())", userId: random.pick(users) ?? "G0U0",
                            purchaseToken: "tokNOPE", time: time(after: Self.epoch, within: 200))
        }
        let consumable = issued.filter { $0.productType != .autoRenewable }
        // Now and then a payment a refund named (refunded before any consume: REFUNDED).
        let refunded = Set(emitted.compactMap { item -> String? in
            if case .refund(let seq, _, _) = item.command { return seq } else { return nil }
        })
        let target: Payment
        if random.chance(0.2), let pick = random.pick(consumable.filter({ refunded.contains($0.paymentSeq) })) {
            target = pick
        } else if random.chance(0.2), let pick = random.pick(issued.filter({ $0.productType == .autoRenewable })) {
            target = pick
        } else if let pick = random.pick(consumable) {
            target = pick
        } else {
            return nil
        }
        var user = target.userId, token: String? = target.purchaseToken
        switch random.int(0...11) {
        case 0: user = random.pick(usersOfGroup(of: target.userId).filter { $0 != target.userId }) ?? user
        case 1: token = "tokWRONG"
        case 2: token = nil
        default: break
        }
        return .consume(paymentSeq: target.paymentSeq, userId: user, purchaseToken: token,
                        time: time(after: target.purchaseTime, within: 10))
    }

    private mutating func refund() -> LedgerCommand? {
        if random.chance(0.08) {
            return .refund(paymentSeq: "NOPE\(nextSerial())", time: time(after: Self.epoch, within: 200), reason: nil)
        }
        guard let target = random.pick(issued) else { return nil }
        return .refund(paymentSeq: target.paymentSeq, time: time(after: target.purchaseTime, within: 40),
                       reason: random.chance(0.5) ? "customer" : nil)
    }

    private mutating func cancel() -> LedgerCommand? {
        if random.chance(0.08) || plans.isEmpty {
            return .cancel(storeCode: store(), originalTransactionId: "LNOPE\(nextSerial())",
                           time: time(after: Self.epoch, within: 200))
        }
        guard let plan = random.pick(plans) else { return nil }
        let days = max(1, Int(plan.end.timeIntervalSince(plan.start) / Self.day))
        return .cancel(storeCode: plan.storeCode, originalTransactionId: plan.originalTransactionId,
                       time: time(after: plan.start, within: days))
    }

    // MARK: Restore, product

    /// A restore of some of a user's payments on one store (delivered or not yet), sometimes with
    /// a consumable, a clashing item, or an item of another user (first, so every path finds it first).
    private mutating func restore() -> LedgerCommand {
        let user: String, storeCode: StoreCode
        if let plan = random.chance(0.85) ? random.pick(plans) : nil {
            user = plan.userId
            storeCode = plan.storeCode
        } else {
            user = random.pick(users) ?? "G0U0"
            storeCode = store()
        }
        var items: [Payment] = []
        for plan in plans where plan.userId == user && plan.storeCode == storeCode {
            items += plan.payments.filter { _ in random.chance(0.6) }
        }
        if random.chance(0.3), let consumable = random.pick(issued.filter {
            $0.userId == user && $0.storeCode == storeCode && $0.productType == .consumable
        }) {
            items.append(consumable)
        }
        if random.chance(0.12), var clash = random.pick(items) {
            clash.price = clash.price.text == "0.99" ? "1.99" : "0.99"
            items.insert(clash, at: random.int(0...items.count))
        }
        if random.chance(0.3), let other = random.pick(usersOfGroup(of: user).filter({ $0 != user })) {
            let n = nextSerial()
            items.insert(Payment(userId: other, storeCode: storeCode, productId: "gem100\(Self.group(of: user))",
                                 productType: .consumable, price: "0.99", currency: "USD", paymentSeq: "C\(n)",
                                 purchaseToken: "tokC\(n)", transactionId: "TC\(n)",
                                 purchaseTime: time(after: Self.epoch, within: 100)), at: 0)
        }
        return .restore(userId: user, storeCode: storeCode, time: time(after: Self.epoch, within: 200), purchases: items)
    }

    /// A product declaration: its own type, or (less often) another.
    private mutating func product() -> LedgerCommand {
        let group = Self.group(of: random.pick(users) ?? "G0U0")
        let catalogue = Self.catalogue(group: group)
        let product = random.pick(catalogue) ?? catalogue[0]
        let type = random.chance(0.6) ? product.type
            : (random.pick([ProductType.consumable, .autoRenewable, .consumableAutoRenewable]) ?? product.type)
        return .product(storeCode: store(), productId: product.productId, productType: type)
    }
}
