import Foundation
import Postgres
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Concurrency")
struct ConcurrencyTests {
    @Test func sixtyFourConcurrentConsumesHandTheGoodsOutOnce() async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 16)
            #expect(try await ledger.record(Fixture.consumable("P-1")) == .recorded)
            let results = try await withThrowingTaskGroup(of: Ledger.ConsumeResult.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        try await ledger.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let consumed = results.filter { if case .consumed = $0 { true } else { false } }
            #expect(results.count == 64)
            #expect(consumed.count == 1)
            let firstTime: Date? = if case .consumed(let at) = consumed.first { at } else { nil }
            for result in results {
                if case .alreadyConsumed(let at) = result { #expect(at == firstTime) }
            }
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentConsumed'") == 1)
            }
            await ledger.close()
        }
    }

    @Test func concurrentIdenticalPurchasesRecordOnce() async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 8)
            let payment = Fixture.subscription("S-1", transaction: "A-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
            let statuses = try await withThrowingTaskGroup(of: CommandOutcome.Status.self) { group in
                for _ in 0..<32 { group.addTask { try await ledger.record(payment) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .recorded }.count == 1)
            #expect(statuses.filter { $0 == .duplicate }.count == 31)
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.lineages") == 1)
            }
            await ledger.close()
        }
    }

    @Test func twoUsersRacingForOneNewLineageLeaveOneOwner() async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 8)
            let outcomes = try await withThrowingTaskGroup(of: CommandOutcome.self) { group in
                for n in 0..<16 {
                    let p = Fixture.subscription("S-\(n)", user: "u\(n)", transaction: "A-\(n)", original: "A-root",
                                                 from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
                    group.addTask { try await ledger.execute(.record(p, kind: .renewal)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0.status == .recorded }.count == 1)
            #expect(outcomes.filter { $0.error?.code == .userInvalid }.count == 15)
            await ledger.close()
        }
    }
}
