import Foundation
import Postgres
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Projections answer the contract's queries")
struct QueryTests {
    @Test func unconsumedListsConsumablesAcrossStoresInPurchaseOrder() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.consumable("P-2", store: .googlePlay, at: "2026-01-01T01:00:00Z"), kind: .purchase))
                _ = try c.run(.record(Fixture.consumable("P-1", at: "2026-01-01T01:00:00Z", payload: "x"), kind: .purchase))
                _ = try c.run(.record(Fixture.consumable("P-0", at: "2026-01-01T00:00:00Z"), kind: .purchase))
                _ = try c.run(.record(Fixture.consumable("P-9", user: "u2"), kind: .purchase))
                _ = try c.run(.record(Fixture.subscription("S-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"), kind: .purchase))
                #expect(try UnconsumedPayment.fetchAll(c, userId: "u1").map(\.paymentSeq) == ["P-0", "P-1", "P-2"])
                #expect(try UnconsumedPayment.fetchAll(c, userId: "u1", stores: [.googlePlay]).map(\.paymentSeq) == ["P-2"])
                #expect(try UnconsumedPayment.fetchAll(c, userId: "nobody").isEmpty)
                let p1 = try #require(try UnconsumedPayment.fetchAll(c, userId: "u1").first { $0.paymentSeq == "P-1" })
                #expect(p1.payload == "x" && p1.price.text == "0.99" && p1.transactionId == "T-P-1" && p1.originalTransactionId == nil)

                #expect(try c.run(.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1", time: Fixture.time("2026-01-01T02:00:00Z"))).status == .consumed)
                let again = try c.run(.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1", time: nil))
                #expect(again.status == .alreadyConsumed && again.consumedAt == Fixture.time("2026-01-01T02:00:00Z"))
                #expect(try c.run(.refund(paymentSeq: "P-0", time: nil, reason: "customer")).status == .recorded)
                #expect(try c.run(.refund(paymentSeq: "P-0", time: nil, reason: nil)).status == .duplicate)
                #expect(try UnconsumedPayment.fetchAll(c, userId: "u1").map(\.paymentSeq) == ["P-2"])
                // Refunded after consumption: stays consumed, the consume answer keeps the first time.
                #expect(try c.run(.refund(paymentSeq: "P-1", time: nil, reason: nil)).status == .recorded)
                #expect(try c.run(.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1", time: nil)).consumedAt == Fixture.time("2026-01-01T02:00:00Z"))
            }
        }
    }

    @Test func payloadWithNULAndEveryCharacterComesBackExactly() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let payload = "a\u{0}b\t\n\\\"'; DROP TABLE x;--🎮\u{1F}é"
                _ = try c.run(.record(Fixture.consumable("P-1", payload: payload), kind: .purchase))
                #expect(try UnconsumedPayment.fetchAll(c, userId: "u1").first?.payload == payload)
                let data = try c.query("SELECT data::text AS d FROM ledger.events")[0].decode("d", as: String.self)
                #expect(data.contains("payloadBase64"))
            }
        }
    }

    @Test func tokensAreStoredOnlyAsDigests() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                var p = Fixture.consumable("P-1")
                p.purchaseToken = "super-secret-token-123"
                _ = try c.run(.record(p, kind: .purchase))
                _ = try c.run(.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "super-secret-token-123", time: nil))
                let everything = try c.query("""
                    SELECT (SELECT string_agg(e::text, '') FROM ledger.events e) || (SELECT string_agg(p::text, '') FROM ledger.payments p) AS t
                    """)[0].decode("t", as: String.self)
                #expect(!everything.contains("super-secret-token-123"))
                // hashlib.sha256(b"super-secret-token-123").hexdigest()
                #expect(everything.contains("47c511f028cce453b0610b1eddb47b6803eac2fd77c0ad2b267610d65254710d"))
            }
        }
    }

    @Test func subscriptionsAtAnInstantFollowRenewalsRefundsAndCancels() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let first = Fixture.subscription("S-1", transaction: "A-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
                let renewal = Fixture.subscription("S-2", transaction: "A-2", original: "A-1", from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
                // The renewal arrives first (stores deliver out of order).
                #expect(try c.run(.record(renewal, kind: .renewal)).status == .recorded)
                #expect(try c.run(.record(first, kind: .purchase)).status == .recorded)
                func at(_ t: String, all: Bool = false) throws -> [Subscription] {
                    try Subscription.fetchAll(c, userId: "u1", at: Fixture.time(t), includeExpired: all)
                }
                let jan = try #require(try at("2026-01-15T00:00:00Z").first)
                #expect(jan.latestPaymentSeq == "S-1" && jan.status == .active && jan.autoRenewing)
                #expect(jan.purchaseTime == Fixture.time("2026-01-01T00:00:00Z") && jan.expiryTime == Fixture.time("2026-02-01T00:00:00Z"))
                #expect(try at("2026-02-15T00:00:00Z").first?.latestPaymentSeq == "S-2")
                #expect(try at("2026-03-01T00:00:00Z").isEmpty)
                #expect(try at("2026-03-01T00:00:00Z", all: true).first?.status == .expired)
                #expect(try at("2025-12-31T00:00:00Z", all: true).isEmpty)

                #expect(try c.run(.cancel(storeCode: .appStore, originalTransactionId: "A-1", time: Fixture.time("2026-02-10T00:00:00Z"))).status == .recorded)
                #expect(try c.run(.cancel(storeCode: .appStore, originalTransactionId: "A-1", time: Fixture.time("2026-02-11T00:00:00Z"))).status == .duplicate)
                #expect(try at("2026-02-05T00:00:00Z").first?.autoRenewing == true)
                #expect(try at("2026-02-15T00:00:00Z").first?.autoRenewing == false)

                #expect(try c.run(.refund(paymentSeq: "S-2", time: Fixture.time("2026-02-20T00:00:00Z"), reason: nil)).status == .recorded)
                #expect(try at("2026-02-15T00:00:00Z").first?.expiryTime == Fixture.time("2026-03-01T00:00:00Z"))
                let revoked = try #require(try at("2026-02-25T00:00:00Z", all: true).first)
                #expect(revoked.status == .revoked && revoked.latestPaymentSeq == "S-1")
                #expect(revoked.expiryTime == Fixture.time("2026-02-01T00:00:00Z"))
                #expect(try at("2026-02-25T00:00:00Z").isEmpty)
            }
        }
    }

    @Test func aLaterRenewalTurnsAutoRenewBackOn() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.subscription("S-1", store: .googlePlay, transaction: "G-0", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"), kind: .purchase))
                _ = try c.run(.cancel(storeCode: .googlePlay, originalTransactionId: "G-0", time: Fixture.time("2026-01-10T00:00:00Z")))
                _ = try c.run(.record(Fixture.subscription("S-2", store: .googlePlay, transaction: "G-1", original: "G-0", from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z"), kind: .renewal))
                #expect(try Subscription.fetchAll(c, userId: "u1", at: Fixture.time("2026-01-15T00:00:00Z")).first?.autoRenewing == false)
                #expect(try Subscription.fetchAll(c, userId: "u1", at: Fixture.time("2026-02-05T00:00:00Z")).first?.autoRenewing == true)
                // Cancelling again after the renewal is recorded, not a duplicate.
                #expect(try c.run(.cancel(storeCode: .googlePlay, originalTransactionId: "G-0", time: Fixture.time("2026-02-10T00:00:00Z"))).status == .recorded)
            }
        }
    }

    @Test func restoreRecordsWhatWasMissedAndListsSubscriptionPayments() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let s0 = Fixture.subscription("S-300", type: .consumableAutoRenewable, transaction: "A-300", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
                let s1 = Fixture.subscription("S-301", type: .consumableAutoRenewable, transaction: "A-301", original: "A-300", from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
                let s2 = Fixture.subscription("S-302", type: .consumableAutoRenewable, transaction: "A-302", original: "A-300", from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z")
                _ = try c.run(.record(s0, kind: .purchase))
                _ = try c.run(.record(Fixture.consumable("P-1"), kind: .purchase))
                let restored = try c.run(.restore(userId: "u1", storeCode: .appStore, time: nil, purchases: [s0, s1, s2]))
                #expect(restored.status == .restored)
                #expect(restored.recorded == ["S-301", "S-302"])
                #expect(restored.payments == ["S-300", "S-301", "S-302"])
                let again = try c.run(.restore(userId: "u1", storeCode: .appStore, time: nil, purchases: [s1]))
                #expect(again.recorded == [] && again.payments == ["S-300", "S-301", "S-302"])
                #expect(try UnconsumedPayment.fetchAll(c, userId: "u1").map(\.paymentSeq) == ["P-1", "S-300", "S-301", "S-302"])
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PurchasesRestored'") == 2)
                #expect(try c.count("SELECT count(*) FROM ledger.restores") == 2)
            }
        }
    }

    @Test func eventsAreChainedAndAppendOnly() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.consumable("P-1"), kind: .purchase))
                _ = try c.run(.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1", time: nil))
                let rows = try c.query("""
                    SELECT stream, version, type, prev_hash = lag(hash, 1, '\\x'::bytea) OVER (PARTITION BY stream ORDER BY version) AS chained,
                           hash = ledger.event_hash(prev_hash, stream, version, type, occurred_at, data) AS valid
                      FROM ledger.events ORDER BY position
                    """)
                #expect(try rows.map { try $0.decode("type", as: String.self) } == ["PurchaseRecorded", "PaymentConsumed"])
                #expect(try rows.map { try $0.decode("version", as: Int.self) } == [1, 2])
                #expect(try rows.allSatisfy { try $0.decode("chained", as: Bool.self) && $0.decode("valid", as: Bool.self) })
                for statement in ["UPDATE ledger.events SET type = 'x'", "DELETE FROM ledger.events", "TRUNCATE ledger.events"] {
                    #expect(throws: PostgresError.self, "\(statement)") { try c.query(SQL(unsafeSQL: statement)) }
                }
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 2)
            }
        }
    }
}
