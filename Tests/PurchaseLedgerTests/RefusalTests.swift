import Foundation
import Postgres
import LedgerTestSupport
import PurchaseLedger
import Testing

/// Every refusal in docs/contract.md §2, with its code, and nothing written.
@Suite("Refusals write nothing")
struct RefusalTests {
    private func expectRefused(_ command: LedgerCommand, _ code: LedgerError.Code, on c: Connection,
                               naming text: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try LedgerSnapshot(c)
        let outcome = try c.run(command)
        #expect(outcome.status == .rejected, sourceLocation: sourceLocation)
        #expect(outcome.error?.code == code, "\(outcome.error?.message ?? "")", sourceLocation: sourceLocation)
        if let text {
            #expect(outcome.error?.message.contains(text) == true, "\(outcome.error?.message ?? "")", sourceLocation: sourceLocation)
        }
        #expect(try LedgerSnapshot(c) == before, "a refusal wrote something", sourceLocation: sourceLocation)
    }

    @Test func samePaymentSeqReplaysAreDuplicatesOrRefused() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let p = Fixture.consumable("P-10")
                #expect(try c.run(.record(p, kind: .purchase)).status == .recorded)
                let before = try LedgerSnapshot(c)
                #expect(try c.run(.record(p, kind: .purchase)).status == .duplicate)
                #expect(try LedgerSnapshot(c) == before)

                var other = p
                other.userId = "u2"
                try expectRefused(.record(other, kind: .purchase), .userInvalid, on: c, naming: "P-10")
                other = p
                other.productId = "gem_500"
                try expectRefused(.record(other, kind: .purchase), .productInvalid, on: c, naming: "P-10")
                for change in [
                    { (x: inout Payment) in x.price = "1.99" }, { $0.currency = "EUR" },
                    { $0.purchaseToken = "other" }, { $0.payload = "other" }, { $0.sandboxPayment = true },
                    { $0.purchaseTime = Fixture.time("2026-01-02T00:00:00Z") }, { $0.transactionId = "T-other" },
                ] {
                    other = p
                    change(&other)
                    try expectRefused(.record(other, kind: .purchase), .paymentConflict, on: c, naming: "P-10")
                }
                other = p
                other.paymentSeq = "P-11"  // same store transaction under another paymentSeq
                try expectRefused(.record(other, kind: .purchase), .paymentConflict, on: c, naming: "T-P-10")
                other.storeCode = .googlePlay  // the same transaction id on the other store is another payment
                #expect(try c.run(.record(other, kind: .purchase)).status == .recorded)
            }
        }
    }

    /// The command functions are granted to the writers' role, and a backend may call them in
    /// SQL: one called without its time (the library always gives one) fails naming the time and
    /// the stream, and writes nothing, rather than failing on the stream's hash, a null, naming no field.
    @Test func aCommandFunctionCalledWithoutItsTimeNamesItAndWritesNothing() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                #expect(try c.run(.record(Fixture.consumable("P-20"), kind: .purchase)).status == .recorded)
                let before = try LedgerSnapshot(c)
                do {
                    try c.execute("SELECT ledger.refund('P-20', NULL, NULL)")
                    Issue.record("a refund without its time was accepted")
                } catch {
                    #expect("\(error)".contains("occurred_at is null") && "\(error)".contains("payment:P-20"), "\(error)")
                }
                #expect(try LedgerSnapshot(c) == before, "a refused call wrote something")
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE refunded_at IS NOT NULL") == 0)
            }
        }
    }

    @Test func lineageOfAnotherUserOrProductIsRefused() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let first = Fixture.subscription("S-1", transaction: "A-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
                #expect(try c.run(.record(first, kind: .purchase)).status == .recorded)
                let renewal = Fixture.subscription("S-2", user: "u2", transaction: "A-2", original: "A-1",
                                                   from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
                try expectRefused(.record(renewal, kind: .renewal), .userInvalid, on: c, naming: "A-1")
                var other = renewal
                other.userId = "u1"
                other.productId = "vip"
                try expectRefused(.record(other, kind: .renewal), .productInvalid, on: c, naming: "A-1")
                other.productId = "premium_month"
                other.productType = .consumableAutoRenewable
                try expectRefused(.record(other, kind: .renewal), .productInvalid, on: c)
            }
        }
    }

    @Test func consumeRefusalsComeInTheContractsOrder() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.consumable("P-20"), kind: .purchase))
                _ = try c.run(.record(Fixture.subscription("S-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"), kind: .purchase))
                let t = Fixture.time("2026-01-01T00:05:00Z")
                try expectRefused(.consume(paymentSeq: "P-404", userId: "u1", purchaseToken: "x", time: t), .notFound, on: c, naming: "P-404")
                // Another user with a wrong token: USER_INVALID comes first.
                try expectRefused(.consume(paymentSeq: "P-20", userId: "u2", purchaseToken: "wrong", time: t), .userInvalid, on: c, naming: "P-20")
                try expectRefused(.consume(paymentSeq: "P-20", userId: "u1", purchaseToken: "wrong", time: t), .tokenInvalid, on: c, naming: "P-20")
                // A wrong token on a subscription: TOKEN_INVALID before NOT_CONSUMABLE.
                try expectRefused(.consume(paymentSeq: "S-1", userId: "u1", purchaseToken: "wrong", time: t), .tokenInvalid, on: c)
                try expectRefused(.consume(paymentSeq: "S-1", userId: "u1", purchaseToken: "tok-S-1", time: t), .notConsumable, on: c, naming: "S-1")
                #expect(try c.run(.refund(paymentSeq: "P-20", time: t, reason: nil)).status == .recorded)
                try expectRefused(.consume(paymentSeq: "P-20", userId: "u1", purchaseToken: "tok-P-20", time: t), .refunded, on: c, naming: "P-20")
            }
        }
    }

    @Test func refundAndCancelOfUnknownThingsAreNotFound() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.consumable("P-1"), kind: .purchase))
                try expectRefused(.refund(paymentSeq: "P-404", time: nil, reason: nil), .notFound, on: c, naming: "P-404")
                try expectRefused(.cancel(storeCode: .googlePlay, originalTransactionId: "GPA.404", time: nil), .notFound, on: c, naming: "GPA.404")
                // A consumable has no lineage to cancel.
                try expectRefused(.cancel(storeCode: .appStore, originalTransactionId: "T-P-1", time: nil), .notFound, on: c)
            }
        }
    }

    @Test func restoreWithOneBadItemWritesNothingOfIt() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let s0 = Fixture.subscription("S-300", type: .consumableAutoRenewable, transaction: "A-300",
                                              from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
                _ = try c.run(.record(s0, kind: .purchase))
                let s1 = Fixture.subscription("S-301", type: .consumableAutoRenewable, transaction: "A-301", original: "A-300",
                                              from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
                var bad = s0
                bad.price = "5.99"
                try expectRefused(.restore(userId: "u1", storeCode: .appStore, time: nil, purchases: [s1, bad]),
                                  .paymentConflict, on: c, naming: "purchases[1]")
                var stranger = s1
                stranger.userId = "u2"
                try expectRefused(.restore(userId: "u2", storeCode: .appStore, time: nil, purchases: [stranger]),
                                  .userInvalid, on: c)
            }
        }
    }

    @Test func badLinesInABatchLeaveTheGoodOnesApplied() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let lines = [
                    Fixture.purchaseLine(["paymentSeq": "\"P-1\"", "transactionId": "\"T-1\""]),
                    "{not json",
                    Fixture.purchaseLine(["paymentSeq": "\"P-1\"", "userId": "\"u2\""]),
                    Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "transactionId": "\"T-2\""]),
                    Fixture.purchaseLine(["storeCode": "\"XX\""]),
                    "{\"type\":\"consume\",\"userId\":\"u1\",\"paymentSeq\":\"P-2\",\"purchaseToken\":\"bad\"}",
                    "{\"type\":\"consume\",\"userId\":\"u1\",\"paymentSeq\":\"P-2\",\"purchaseToken\":\"tok-1\"}",
                ]
                let results = try c.ingest(lines)
                #expect(results.map(\.status) == [.recorded, .rejected, .rejected, .recorded, .rejected, .rejected, .consumed])
                #expect(results.compactMap(\.error?.code) == [.invalidInput, .userInvalid, .unknownStore, .tokenInvalid])
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 3)
            }
        }
    }
}
