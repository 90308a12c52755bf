import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger

/// A small ledger whose every analytics figure the tests compute by hand. All times are UTC, 2026.
///
/// Consumables (goods):
/// - C1  AS gem_100  0.99 USD  Jan 1 10:00, consumed Jan 1 10:05, refunded Jan 3 12:00 (after consume)
/// - C2  AS gem_100  0.99 USD  Jan 31 23:00, refunded Feb 1 01:00 (across the month boundary), never consumed
/// - C3  GG `gem "big", pack`  4.99 EUR  Jan 2 08:00, never consumed
/// - C4  GG `gem "big", pack`  1.10 EUR  Jan 2 09:00, sandbox, never consumed
/// - C5  AS gem_550  1200 KRW  Feb 2 12:00, never consumed
/// - C6  AS gem_100  0.99 USD  Jan 5 00:00, consumed Jan 20 00:00
/// - C7  AS gem_100  0.99 USD  Jan 7 00:00, never consumed
///
/// Subscriptions (lineage: payments [purchase, expiry)):
/// - L1  AS premium_month 9.99 USD: S1 [Jan 1 00:00, Jan 11 00:00), S2 [Jan 11 00:00, Jan 21 00:00)
///       delivered late (last), auto-renew cancelled Jan 15 → churns voluntarily Jan 21
/// - L2  GG vip_week 2.99 USD: T1 [Jan 3 09:00, Jan 10 09:00), cancelled Jan 5 → voluntary churn
///       Jan 10; T2 [Jan 12 06:00, Jan 19 06:00) after a gap turns auto-renew back on →
///       involuntary churn Jan 19. Active at the end of Jan 3-9 and Jan 12-18 only.
/// - L3  AS premium_month 9.99 USD: R1 [Jan 5 10:00, Feb 5 10:00), refunded Jan 20 12:00 → revoked
/// - L4  AS premium_month 9.99 USD, sandbox: [Jan 2 10:00, Feb 2 10:00)
enum AnalyticsFixture {
    static let oddProduct = "gem \"big\", pack"

    static func purchase(_ seq: String, store: String = "AS", product: String, type: String = "CONSUMABLE",
                         price: String, currency: String = "USD", at: String, expiry: String? = nil,
                         original: String? = nil, sandbox: Bool = false, kind: String = "purchase") -> String {
        var fields: [String: Any] = [
            "type": kind, "userId": "u-\(seq)", "storeCode": store, "productId": product, "productType": type,
            "price": price, "currency": currency, "paymentSeq": seq, "purchaseToken": "tok-\(seq)",
            "transactionId": "T-\(seq)", "purchaseTime": at, "sandboxPayment": sandbox,
        ]
        if let expiry { fields["expiryTime"] = expiry }
        if let original { fields["originalTransactionId"] = original }
        return json(fields)
    }

    static func renewal(_ seq: String, of first: String, store: String = "AS", product: String, price: String,
                        at: String, expiry: String) -> String {
        var fields = try! JSONSerialization.jsonObject(with: Data(purchase(
            seq, store: store, product: product, type: "AUTO_RENEWABLE", price: price, at: at, expiry: expiry,
            original: "T-\(first)", kind: "renewal").utf8)) as! [String: Any]
        fields["userId"] = "u-\(first)"
        return json(fields)
    }

    static func consume(_ seq: String, at: String) -> String {
        json(["type": "consume", "userId": "u-\(seq)", "paymentSeq": seq, "purchaseToken": "tok-\(seq)", "time": at])
    }

    static func refund(_ seq: String, at: String) -> String {
        json(["type": "refund", "paymentSeq": seq, "time": at, "reason": "customer"])
    }

    static func cancel(_ first: String, store: String = "AS", at: String) -> String {
        json(["type": "cancel", "storeCode": store, "originalTransactionId": "T-\(first)", "time": at])
    }

    private static func json(_ fields: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Every line but the late renewal S2.
    static let early: [String] = [
        purchase("C1", product: "gem_100", price: "0.99", at: "2026-01-01T10:00:00Z"),
        consume("C1", at: "2026-01-01T10:05:00Z"),
        refund("C1", at: "2026-01-03T12:00:00Z"),
        purchase("C2", product: "gem_100", price: "0.99", at: "2026-01-31T23:00:00Z"),
        refund("C2", at: "2026-02-01T01:00:00Z"),
        purchase("C3", store: "GG", product: oddProduct, price: "4.99", currency: "EUR", at: "2026-01-02T08:00:00Z"),
        purchase("C4", store: "GG", product: oddProduct, price: "1.10", currency: "EUR", at: "2026-01-02T09:00:00Z",
                 sandbox: true),
        purchase("C5", product: "gem_550", price: "1200", currency: "KRW", at: "2026-02-02T12:00:00Z"),
        purchase("C6", product: "gem_100", price: "0.99", at: "2026-01-05T00:00:00Z"),
        consume("C6", at: "2026-01-20T00:00:00Z"),
        purchase("C7", product: "gem_100", price: "0.99", at: "2026-01-07T00:00:00Z"),

        purchase("S1", product: "premium_month", type: "AUTO_RENEWABLE", price: "9.99",
                 at: "2026-01-01T00:00:00Z", expiry: "2026-01-11T00:00:00Z"),
        cancel("S1", at: "2026-01-15T00:00:00Z"),
        purchase("T1", store: "GG", product: "vip_week", type: "AUTO_RENEWABLE", price: "2.99",
                 at: "2026-01-03T09:00:00Z", expiry: "2026-01-10T09:00:00Z"),
        cancel("T1", store: "GG", at: "2026-01-05T00:00:00Z"),
        renewal("T2", of: "T1", store: "GG", product: "vip_week", price: "2.99",
                at: "2026-01-12T06:00:00Z", expiry: "2026-01-19T06:00:00Z"),
        purchase("R1", product: "premium_month", type: "AUTO_RENEWABLE", price: "9.99",
                 at: "2026-01-05T10:00:00Z", expiry: "2026-02-05T10:00:00Z"),
        refund("R1", at: "2026-01-20T12:00:00Z"),
        purchase("L4", product: "premium_month", type: "AUTO_RENEWABLE", price: "9.99",
                 at: "2026-01-02T10:00:00Z", expiry: "2026-02-02T10:00:00Z", sandbox: true),
    ]

    /// The renewal of L1 that the store delivered late.
    static let lateRenewal = renewal("S2", of: "S1", product: "premium_month", price: "9.99",
                                     at: "2026-01-11T00:00:00Z", expiry: "2026-01-21T00:00:00Z")

    /// Ingests the whole data set (the late renewal last) and checks that every line was taken.
    static func load(into c: Connection, withLateRenewal: Bool = true) throws {
        let lines = early + (withLateRenewal ? [lateRenewal] : [])
        let outcomes = try c.ingest(lines)
        for (line, outcome) in zip(lines, outcomes) where outcome.status == .rejected {
            throw TestSetupError("fixture line refused: \(outcome.error?.message ?? "") in \(line)")
        }
    }

    static func day(_ text: String) -> CalendarDay { CalendarDay(text)! }

    static func query(_ from: String, _ to: String, by: AnalyticsPeriod = .day, stores: Set<StoreCode> = [],
                      sandbox: Bool = false) -> AnalyticsQuery {
        AnalyticsQuery(from: day(from), to: day(to), by: by, stores: stores, includeSandbox: sandbox)
    }
}
