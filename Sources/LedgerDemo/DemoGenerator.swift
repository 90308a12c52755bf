import LedgerJSON
import PurchaseLedger

/// Realistic ledger traffic from a fixed seed: users on both stores buying consumables and both
/// kinds of subscription, renewals (some delivered before their first purchase), consumes,
/// refunds (some after the goods were handed out), auto-renew cancels, restores of payments
/// the backend missed, duplicate deliveries and a small share of lines the ledger refuses.
///
/// It streams: one user's lines at a time, in the order a backend would see them.
public struct DemoGenerator: Sequence, IteratorProtocol {
    /// The generator's clock: the data runs up to this instant, and the demo asks its questions at it.
    public static let clock = Timestamp.parseISO8601("2026-11-15T12:00:00Z")!
    static let start = Timestamp.parseISO8601("2026-01-01T00:00:00Z")!

    /// Stop after the user whose lines reach this many (nil: after `users` users).
    public var maxLines: Int?
    /// How many users (when `maxLines` is nil).
    public var users: Int
    private var random: SplitMix64
    private var userIndex = 0
    private var counter = 0
    private var emitted = 0
    private var queue: [String] = []
    private var queueIndex = 0

    public init(seed: UInt64 = 42, users: Int = 3000, maxLines: Int? = nil) {
        self.random = SplitMix64(seed: seed)
        self.users = users
        self.maxLines = maxLines
    }

    /// The user whose data the demo shows: both stores, goods not yet handed out, and an active
    /// subscription on each store.
    public static let showcaseUser = DemoGenerator.userId(0)

    /// The user ID the generator gives its `index`-th user.
    public static func userId(_ index: Int) -> String {
        let digits = String(index)
        return "user-" + String(repeating: "0", count: Swift.max(0, 5 - digits.count)) + digits
    }

    /// How many users the lines so far came from.
    public var usersGenerated: Int { userIndex }

    public mutating func next() -> String? {
        while queueIndex == queue.count {
            if let maxLines, emitted >= maxLines { return nil }
            if maxLines == nil, userIndex >= users { return nil }
            queue = makeUser(userIndex)
            queueIndex = 0
            userIndex += 1
        }
        defer { queueIndex += 1; emitted += 1 }
        return queue[queueIndex]
    }

    // MARK: - One user's story

    private struct Line {
        var time: Int64
        var order: Int
        var text: String
    }

    private struct Product {
        var id: String
        var type: ProductType
        var prices: [String: String]  // currency → price
        var days: Int
    }

    private static let consumables = [
        Product(id: "gem_100", type: .consumable, prices: ["USD": "0.99", "EUR": "0.99", "KRW": "1200", "JPY": "160"], days: 0),
        Product(id: "gem_550", type: .consumable, prices: ["USD": "4.99", "EUR": "4.99", "KRW": "5900", "JPY": "800"], days: 0),
        Product(id: "gem_1200", type: .consumable, prices: ["USD": "9.99", "EUR": "10.99", "KRW": "12000", "JPY": "1600"], days: 0),
        Product(id: "starter_pack", type: .consumable, prices: ["USD": "2.99", "EUR": "2.99", "KRW": "3900", "JPY": "480"], days: 0),
    ]

    private static let subscriptions = [
        Product(id: "premium_month", type: .autoRenewable, prices: ["USD": "9.99", "EUR": "9.99", "KRW": "11000", "JPY": "1500"], days: 30),
        Product(id: "vip_week", type: .autoRenewable, prices: ["USD": "2.99", "EUR": "2.99", "KRW": "3900", "JPY": "450"], days: 7),
        Product(id: "coins_monthly", type: .consumableAutoRenewable, prices: ["USD": "4.99", "EUR": "4.99", "KRW": "5900", "JPY": "750"], days: 30),
    ]

    private mutating func makeUser(_ index: Int) -> [String] {
        let user = Self.userId(index)
        let showcase = index == 0
        var lines: [Line] = []
        var order = 0
        func add(_ time: Int64, _ text: String) {
            lines.append(Line(time: time, order: order, text: text))
            order += 1
        }
        let currency = random.pick([("USD", 0.6), ("EUR", 0.2), ("KRW", 0.1), ("JPY", 0.1)])
        let mainStore: StoreCode = random.chance(0.55) ? .appStore : .googlePlay
        let stores: [StoreCode] = showcase || random.chance(0.2) ? [.appStore, .googlePlay] : [mainStore]
        let span = Self.clock.microseconds - Self.start.microseconds
        var restoreItems: [StoreCode: [String]] = [:]

        // Consumables.
        let purchases = showcase ? 5 : Int(random.next() % 7)
        for n in 0..<purchases {
            let store = stores[Int(random.next() % UInt64(stores.count))]
            let product = Self.consumables[Int(random.next() % UInt64(Self.consumables.count))]
            let time = showcase ? Self.clock.microseconds - Int64(n + 1) * 3_600_000_000
                : Self.start.microseconds + Int64(random.next() % UInt64(span))
            let payment = makePayment(user, store, product, currency, time, original: nil)
            add(time, payment.json(type: "purchase"))
            if random.chance(0.03) { add(time + 60_000_000, payment.json(type: "purchase")) }  // delivered twice
            let consumed = showcase ? n >= 3 : random.chance(0.85)
            if consumed {
                let at = time + Int64(random.next() % 600_000_000) + 1_000_000
                add(at, consumeLine(user, payment.seq, payment.token, at))
                if random.chance(0.02) { add(at + 5_000_000, consumeLine(user, payment.seq, payment.token, at + 5_000_000)) }
            }
            if !showcase, random.chance(0.03) {
                let at = time + Int64(random.next() % 86_400_000_000 * 10) + 3_600_000_000
                add(at, refundLine(payment.seq, at, random.chance(0.5) ? "customer" : "revoked"))
            }
            if !showcase, random.chance(0.01) {  // a client that sends a stale token: refused
                add(time + 2_000_000, consumeLine(user, payment.seq, "stale-" + payment.token, time + 2_000_000))
            }
        }

        // Subscriptions.
        let lineages = showcase ? 2 : (random.chance(0.4) ? 1 + Int(random.next() % 2) : 0)
        for n in 0..<lineages {
            let store = showcase ? stores[n] : stores[Int(random.next() % UInt64(stores.count))]
            let product = showcase ? Self.subscriptions[n == 0 ? 0 : 2]
                : Self.subscriptions[Int(random.next() % UInt64(Self.subscriptions.count))]
            let period = Int64(product.days) * 86_400_000_000
            var time = showcase ? Self.clock.microseconds - 45 * 86_400_000_000
                : Self.start.microseconds + Int64(random.next() % UInt64(span))
            let first = makePayment(user, store, product, currency, time, original: nil, period: period)
            var payments = [first]
            let willCancel = !showcase && random.chance(0.25)
            let lateFirst = !showcase && random.chance(0.05)
            let restoreMissed = !showcase && random.chance(0.05)
            while time + period < Self.clock.microseconds, showcase || random.chance(0.85) {
                time += period
                payments.append(makePayment(user, store, product, currency, time, original: first.transactionId, period: period))
            }
            for (k, payment) in payments.enumerated() {
                let type = k == 0 ? "purchase" : "renewal"
                // A late first purchase arrives after the first renewal.
                let at = (k == 0 && lateFirst && payments.count > 1) ? payments[1].time + 1 : payment.time
                if restoreMissed && k == payments.count - 1 && k > 0 {
                    restoreItems[store, default: []] += payments.map { $0.json(type: nil) }
                    continue  // the backend missed it: only the restore brings it
                }
                add(at, payment.json(type: type))
                if random.chance(0.02) { add(at + 30_000_000, payment.json(type: type)) }
                if product.type == .consumableAutoRenewable, random.chance(0.8) {
                    add(at + 120_000_000, consumeLine(user, payment.seq, payment.token, at + 120_000_000))
                }
            }
            if willCancel, let last = payments.last {
                let at = last.time + period / 2
                add(at, cancelLine(store, first.transactionId, at))
                if random.chance(0.1) { add(at + 1_000_000, cancelLine(store, first.transactionId, at + 1_000_000)) }
            }
            if !showcase, random.chance(0.02), let last = payments.last {
                let at = last.time + 86_400_000_000
                add(at, refundLine(last.seq, at, "revoked"))
            }
        }
        for (store, items) in restoreItems.sorted(by: { $0.key < $1.key }) {
            let at = Self.clock.microseconds - Int64(random.next() % 86_400_000_000)
            add(at, restoreLine(user, store, at, items))
        }
        if !showcase, random.chance(0.005) {  // a store the ledger does not know
            let at = Self.start.microseconds + Int64(random.next() % UInt64(span))
            var p = makePayment(user, .appStore, Self.consumables[0], currency, at, original: nil)
            p.storeOverride = "ONESTORE"
            add(at, p.json(type: "purchase"))
        }
        lines.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        return lines.map(\.text)
    }

    // MARK: - Lines

    private struct DemoPayment {
        var user: String
        var store: StoreCode
        var storeOverride: String?
        var product: Product
        var currency: String
        var seq: String
        var token: String
        var transactionId: String
        var original: String?
        var time: Int64
        var expiry: Int64?
        var epochMillis: Bool

        func json(type: String?) -> String {
            var w = JSONWriter()
            w.beginObject()
            if let type { w.field("type", type) }
            w.field("userId", user)
            w.field("storeCode", storeOverride ?? store.rawValue)
            w.field("productId", product.id)
            w.field("productType", product.type.rawValue)
            w.field("price", product.prices[currency] ?? "0.99")
            w.field("currency", currency)
            w.field("paymentSeq", seq)
            w.field("purchaseToken", token)
            w.field("transactionId", transactionId)
            w.field("originalTransactionId", original)
            DemoGenerator.writeTime(&w, "purchaseTime", time, epochMillis: epochMillis)
            if let expiry { DemoGenerator.writeTime(&w, "expiryTime", expiry, epochMillis: epochMillis) } else { w.field("expiryTime", nil as String?) }
            w.field("sandboxPayment", false)
            w.field("promotionPayment", false)
            w.endObject()
            return w.string
        }
    }

    private mutating func makePayment(_ user: String, _ store: StoreCode, _ product: Product, _ currency: String,
                                      _ time: Int64, original: String?, period: Int64 = 0) -> DemoPayment {
        counter += 1
        let n = String(counter)
        let padded = String(repeating: "0", count: Swift.max(0, 9 - n.count)) + n
        let token = String(random.next(), radix: 16) + String(random.next(), radix: 16)
        let transaction = store == .appStore ? "2000000" + padded
            : "GPA.\(3300 + counter % 97)-\(padded.prefix(4))-\(padded.suffix(5))"
        return DemoPayment(
            user: user, store: store, product: product, currency: currency,
            seq: "2026" + padded, token: token, transactionId: transaction, original: original,
            time: time, expiry: product.type.isSubscription ? time + period : nil,
            epochMillis: store == .googlePlay)
    }

    static func writeTime(_ w: inout JSONWriter, _ key: String, _ micros: Int64, epochMillis: Bool) {
        if epochMillis {
            w.key(key)
            w.rawNumber(String(micros / 1000))
        } else {
            w.field(key, Timestamp(microseconds: micros).iso8601Milliseconds)
        }
    }

    private func consumeLine(_ user: String, _ seq: String, _ token: String, _ at: Int64) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("type", "consume")
        w.field("userId", user)
        w.field("paymentSeq", seq)
        w.field("purchaseToken", token)
        w.field("time", Timestamp(microseconds: at).iso8601Milliseconds)
        w.endObject()
        return w.string
    }

    private func refundLine(_ seq: String, _ at: Int64, _ reason: String) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("type", "refund")
        w.field("paymentSeq", seq)
        w.field("time", Timestamp(microseconds: at).iso8601Milliseconds)
        w.field("reason", reason)
        w.endObject()
        return w.string
    }

    private func cancelLine(_ store: StoreCode, _ original: String, _ at: Int64) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("type", "cancel")
        w.field("storeCode", store.rawValue)
        w.field("originalTransactionId", original)
        w.field("time", Timestamp(microseconds: at).iso8601Milliseconds)
        w.endObject()
        return w.string
    }

    private func restoreLine(_ user: String, _ store: StoreCode, _ at: Int64, _ items: [String]) -> String {
        "{\"type\":\"restore\",\"userId\":\(JSONWriter.quoted(user)),\"storeCode\":\"\(store.rawValue)\",\"time\":\"\(Timestamp(microseconds: at).iso8601Milliseconds)\",\"purchases\":[\(items.joined(separator: ","))]}"
    }
}
