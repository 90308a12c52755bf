import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// `ledger.payment_event` is the one writer of PurchaseRecorded and RenewalRecorded data. For
/// what the library sends it builds the very data the library's own writer put in the log
/// before (`Payment.commandFields()` is that writer, kept as the command's form), so the log,
/// its hash chains, the projections and replays stay as they were.
@Suite("Payment event data is built in SQL, as the library used to write it")
struct PaymentEventTests {
    static let payments: [(Payment, PaymentKind)] = {
        var list: [(Payment, PaymentKind)] = []
        list.append((Fixture.consumable("P-1"), .purchase))
        for (seq, price) in [("P-2", "1.10"), ("P-3", "-0.00"), ("P-4", "1.5e2"), ("P-5", "0"), ("P-6", "12345678901234567890.123456789")] {
            list.append((Fixture.consumable(seq, price: Price(price)!), .purchase))
        }
        list.append((Fixture.consumable("P-7", payload: "a\u{0}b"), .purchase))
        list.append((Fixture.consumable("P-8", payload: "😀 \u{1} \" \\ é\n"), .purchase))
        list.append((Fixture.consumable("P-9", payload: ""), .purchase))
        list.append((Fixture.consumable("P-10", store: .googlePlay, at: "0001-01-01T00:00:00Z"), .purchase))
        list.append((Fixture.consumable("P-11", at: "9999-12-31T23:59:59.999999Z"), .purchase))
        list.append((Fixture.consumable("P-12", at: "2026-03-04T05:06:07.123456+09:00"), .purchase))
        var flags = Fixture.consumable("P-13")
        flags.sandboxPayment = true
        flags.promotionPayment = true
        flags.productSeq = Int64.max
        flags.originalTransactionId = "O-13"
        list.append((flags, .purchase))
        var negative = Fixture.consumable("P-14")
        negative.productSeq = -1
        list.append((negative, .purchase))
        list.append((Fixture.subscription("S-1", transaction: "A-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"), .purchase))
        list.append((Fixture.subscription("S-2", transaction: "A-2", original: "A-1", from: "2026-02-01T00:00:00Z",
                                          to: "2026-03-01T00:00:00.5Z"), .renewal))
        list.append((Fixture.subscription("S-3", type: .consumableAutoRenewable, transaction: "B-1",
                                          from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"), .purchase))
        return list
    }()

    @Test func theDatabaseWritesTheEventTheLibraryWroteBeforeForEveryPayment() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                for (payment, kind) in Self.payments {
                    let written = payment.commandFields()
                    #expect(try c.run(.record(payment, kind: kind)).status == .recorded, "\(payment.paymentSeq)")
                    let row = try c.query("""
                        SELECT data = \(JSONB(text: written))::jsonb AS same, data::text AS data FROM ledger.events
                         WHERE stream = \("payment:" + payment.paymentSeq) AND type IN ('PurchaseRecorded', 'RenewalRecorded')
                        """)[0]
                    let data = try row.decode("data", as: String.self)
                    #expect(try row.decode("same", as: Bool.self), "\(payment.paymentSeq): wrote \(data), the library wrote \(written)")
                }
                // The same payments again are duplicates: the command compares equal to what was built.
                for (payment, kind) in Self.payments {
                    #expect(try c.run(.record(payment, kind: kind)).status == .duplicate, "\(payment.paymentSeq)")
                }
                #expect(try ChainVerifier(connection: c).verify().isIntact)
            }
        }
    }

    /// A direct caller's command in another form than the library's becomes the same canonical
    /// event: its other keys dropped, times in UTC with microseconds, the price as numeric text,
    /// the digest in lowercase.
    @Test func aDirectCallersCommandBecomesTheCanonicalEventWithoutItsOtherKeys() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let command = """
                    {"userId":"u1","storeCode":"AS","productId":"gem_100","productType":"AUTO_RENEWABLE","price":-0.0,
                     "currency":"USD","paymentSeq":"P-1","transactionId":"T-1","purchaseTime":"2026-01-01 09:00:00.1234567+09",
                     "expiryTime":"2026-02-01T00:00:00Z","sandboxPayment":false,"promotionPayment":true,"productSeq":7,
                     "purchaseTokenSha256":"\(String(repeating: "AB", count: 32))","extra":"x","consumedAt":"2026-01-01T00:00:00Z"}
                    """
                let row = try c.query("SELECT status, message FROM ledger.record_payment('purchase', \(JSONB(text: command))::jsonb)")[0]
                let message = try row.decode("message", as: String?.self) ?? ""
                #expect(try row.decode("status", as: String.self) == "recorded", "\(message)")
                let expected = """
                    {"userId":"u1","storeCode":"AS","productId":"gem_100","productType":"AUTO_RENEWABLE","price":"0.0",
                     "currency":"USD","paymentSeq":"P-1","transactionId":"T-1","originalTransactionId":null,
                     "purchaseTime":"2026-01-01T00:00:00.123457Z","expiryTime":"2026-02-01T00:00:00.000000Z","payload":null,
                     "sandboxPayment":false,"promotionPayment":true,"productSeq":7,
                     "purchaseTokenSha256":"\(String(repeating: "ab", count: 32))"}
                    """
                let same = try c.query("SELECT data = \(JSONB(text: expected))::jsonb AS same, data::text AS data FROM ledger.events WHERE stream = 'payment:P-1'")[0]
                let data = try same.decode("data", as: String.self)
                #expect(try same.decode("same", as: Bool.self), "\(data)")
            }
        }
    }

    /// A payment first learned from an App Store notification (no token) keeps the shape the
    /// notification path gave it: the transaction's fields, the ledger's userId, productType and
    /// paymentSeq, and "source": "notification".
    @Test func aPaymentFromAStoreNotificationKeepsItsShape() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let fromApple = """
                    {"storeCode":"AS","productId":"gem_100","price":"0.99","currency":"USD","transactionId":"2000",
                     "originalTransactionId":"2000","purchaseTime":"2026-01-01T00:00:00.000000Z","expiryTime":null,
                     "payload":null,"sandboxPayment":true,"promotionPayment":false,"productSeq":null,
                     "userId":"u1","productType":"CONSUMABLE","paymentSeq":"2000"}
                    """
                let row = try c.query("""
                    SELECT ledger.payment_event(\(JSONB(text: fromApple))::jsonb, true)
                           = (\(JSONB(text: fromApple))::jsonb || '{"source":"notification"}') AS same
                    """)[0]
                #expect(try row.decode("same", as: Bool.self))
            }
        }
    }
}
