import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Concurrent calls on one `Ledger` share transactions, and each call still gets the outcome it
/// would get alone.
@Suite("Group commit")
struct GroupCommitTests {
    /// How many transactions wrote the log's events.
    func transactions(_ c: Connection) throws -> Int {
        try c.count("SELECT count(DISTINCT xmin::text) FROM ledger.events")
    }

    @Test func concurrentCallsShareTransactionsAndEachGetsItsOwnOutcome() async throws {
        try await TestDatabase.with { db in
            // A pool of two runs one batch at a time: every call that arrives meanwhile waits and
            // goes with the next one.
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2)
            #expect(try await ledger.record(Fixture.consumable("P-0")) == .recorded)
            let commands: [LedgerCommand] = (1...48).map { .record(Fixture.consumable("P-\($0)"), kind: .purchase) }
                + (1...8).map { _ in .consume(paymentSeq: "P-0", userId: "u1", purchaseToken: "tok-P-0", time: nil) }
                + (1...8).map { .refund(paymentSeq: "missing-\($0)", time: nil, reason: nil) }
            let outcomes = try await withThrowingTaskGroup(of: (Int, CommandOutcome).self) { group in
                for (index, command) in commands.enumerated() {
                    group.addTask { (index, try await ledger.execute(command)) }
                }
                return try await group.reduce(into: [Int: CommandOutcome]()) { $0[$1.0] = $1.1 }
            }
            await ledger.close()
            #expect(outcomes.count == commands.count)
            for index in 0..<48 {
                #expect(outcomes[index]?.status == .recorded && outcomes[index]?.paymentSeq == "P-\(index + 1)")
            }
            let consumes = (48..<56).compactMap { outcomes[$0]?.status }
            #expect(consumes.filter { $0 == .consumed }.count == 1 && consumes.filter { $0 == .alreadyConsumed }.count == 7)
            for index in 56..<64 {
                #expect(outcomes[index]?.error?.code == .notFound && outcomes[index]?.paymentSeq == "missing-\(index - 55)")
            }
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 50)
                // 49 purchases and one consume written by fewer transactions than calls.
                let written = try transactions(c)
                #expect(written < 50, "\(written) transactions for 50 events: no call shared one")
            }
        }
    }

    @Test func aCallThatFailsInABatchFailsAloneAndTheOthersApply() async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2)
            #expect(try await ledger.record(Fixture.consumable("P-0")) == .recorded)
            // A time PostgreSQL cannot hold fails its statement, and with it the transaction.
            let beyond = Date(timeIntervalSince1970: 1e13)
            let results = await ledger.runBatch([
                .record(Fixture.consumable("P-1"), kind: .purchase),
                .consume(paymentSeq: "P-0", userId: "u1", purchaseToken: "tok-P-0", time: beyond),
                .record(Fixture.consumable("P-2"), kind: .purchase),
            ])
            await ledger.close()
            #expect(results.count == 3)
            #expect((try? results[0].get())?.status == .recorded)
            #expect(throws: PostgresError.self) { try results[1].get() }
            #expect((try? results[2].get())?.status == .recorded)
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 3)
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE consumed_at IS NOT NULL") == 0)
            }
        }
    }

    @Test func aLoneCallRunsAloneInItsOwnTransaction() async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2)
            for n in 1...5 { #expect(try await ledger.record(Fixture.consumable("P-\(n)")) == .recorded) }
            await ledger.close()
            try db.withConnection { c throws in #expect(try transactions(c) == 5) }
        }
    }
}
