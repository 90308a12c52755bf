import Foundation
import LedgerTestSupport
import Postgres
import Testing

/// `ledger ingest` after its connection died in the middle of a batch (pg_terminate_backend, as a
/// failover or an operator would): it sends the batch again on a new connection only when every
/// command in it is idempotent. A consume is not: if the first try had committed, the second
/// would answer `alreadyConsumed` and the goods would never be handed out.
@Suite("A lost connection is retried only where the command is idempotent")
struct LostConnectionTests {
    @Test(arguments: [1, 2])
    func aConsumeBatchWhoseConnectionIsLostIsNotRetried(batchSize: Int) async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let input = dir.file("input.ndjson")
        try ContractLines.file([
            ContractLines.purchase("P-3"), ContractLines.consume("P-2"),
            ContractLines.consume("P-1"), ContractLines.purchase("P-5"),
        ]).write(toFile: input, atomically: true, encoding: .utf8)
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                #expect(try c.ingest([ContractLines.purchase("P-1"), ContractLines.purchase("P-2")]).map(\.status) == [.recorded, .recorded])
            }
            // Hold P-1's row lock, so that the batch with its consume waits in the database.
            let holder = try db.connect()
            defer { holder.close() }
            try holder.executeScript(unsafeSQL: "BEGIN")
            try holder.query("SELECT 1 FROM ledger.payments WHERE payment_seq = 'P-1' FOR UPDATE")
            let ingest = try LedgerProcess.start(["ingest", input, "--batch-size", "\(batchSize)", "--database-url", db.conninfo])
            let backend = try Self.waitingBackend(db, besides: [holder.serverProcessID])
            try holder.query("SELECT pg_terminate_backend(\(backend))")
            let out = ingest.wait(timeout: 60)
            try holder.executeScript(unsafeSQL: "ROLLBACK")

            #expect(!out.signalled && !out.timedOut && out.status == 2, "\(out.status) \(out.stderr)")
            #expect(out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
            let results = try IngestResult.all(out.lines)
            #expect(results.map(\.line) == [1, 2], "results were printed for the lost batch")
            #expect(results.map(\.status) == ["recorded", "consumed"])
            try db.withConnection { c throws in
                let facts = try LogFacts(c)
                #expect(facts.consumes["P-1"] == nil, "the lost consume was sent again")
                #expect(facts.records["P-5"] == nil, "ingest went on after the lost batch")
                #expect(facts.consumes["P-2"] == 1)
            }
        }
    }

    @Test(arguments: [1, 3])
    func aPurchaseBatchWhoseConnectionIsLostIsRetriedAndCompletes(batchSize: Int) async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let input = dir.file("input.ndjson")
        let seqs = ["P-7", "P-8", "P-9", "P-10"]
        try ContractLines.file(seqs.map { ContractLines.purchase($0) }).write(toFile: input, atomically: true, encoding: .utf8)
        try await TestDatabase.with { db in
            // Hold the advisory lock that recording P-9 takes, so that its batch waits.
            let holder = try db.connect()
            defer { holder.close() }
            try holder.executeScript(unsafeSQL: "BEGIN")
            try holder.query("SELECT pg_advisory_xact_lock(hashtextextended('payment:P-9', 0))")
            let ingest = try LedgerProcess.start(["ingest", input, "--batch-size", "\(batchSize)", "--database-url", db.conninfo])
            let first = try Self.waitingBackend(db, besides: [holder.serverProcessID])
            try holder.query("SELECT pg_terminate_backend(\(first))")
            // The batch comes back on a new connection and waits for the lock again.
            let second = try Self.waitingBackend(db, besides: [holder.serverProcessID, first])
            try holder.executeScript(unsafeSQL: "COMMIT")
            let out = ingest.wait(timeout: 60)

            #expect(second != first)
            #expect(!out.signalled && !out.timedOut && out.status == 0, "\(out.status) \(out.stderr)")
            let results = try IngestResult.all(out.lines)
            #expect(results.map(\.line) == [1, 2, 3, 4])
            #expect(results.map(\.status) == ["recorded", "recorded", "recorded", "recorded"])
            try db.withConnection { c throws in
                let facts = try LogFacts(c)
                #expect(seqs.allSatisfy { facts.records[$0] == 1 }, "\(facts.records)")
                #expect(facts.events == 4)
            }
        }
    }

    /// The backend of `db` that waits for a lock, other than `besides`; polls for up to 60 s.
    static func waitingBackend(_ db: TestDatabase, besides: [Int32]) throws -> Int32 {
        try LockWaiters.wait(besides: besides) { try db.connect() }[0]
    }
}
