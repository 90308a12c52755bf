import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Queries and reports read from a PostgreSQL streaming replica of the test server
/// (`scripts/dev test` starts one: `scripts/dev replica`), and a caller still reads its own
/// writes: the replica answers once it has replayed them, else the primary does. Replay is
/// paused on the replica to make it fall behind, so the suite runs its tests one at a time.
@Suite("Reads from a streaming replica", .serialized)
struct ReadReplicaTests {
    /// Runs `body` with a fresh database on the primary, once the replica has it, and a ledger
    /// reading from the replica.
    static func with(_ body: (TestDatabase, Ledger, Connection, String) async throws -> Void) async throws {
        try await TestDatabase.with { db in
            let (standby, conninfo) = try await TestReplica.connect(to: db)
            defer { standby.close() }
            #expect(try standby.query("SELECT pg_is_in_recovery()")[0].decode(0, as: Bool.self))
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2, readDatabaseURLs: [conninfo])
            do {
                try await body(db, ledger, standby, conninfo)
            } catch {
                _ = try? standby.query("SELECT pg_wal_replay_resume()")
                await ledger.close()
                throw error
            }
            _ = try? standby.query("SELECT pg_wal_replay_resume()")
            await ledger.close()
        }
    }

    @Test func aQueryAfterACommandSeesItThroughTheReplica() async throws {
        try await Self.with { _, ledger, _, _ in
            for n in 1...5 {
                let status = try await ledger.record(Fixture.consumable("P-\(n)"))
                let seen = try await ledger.unconsumed(userId: "u1").count
                #expect(status == .recorded && seen == n)
            }
            let owner = try await ledger.lookup(.paymentSeq("P-5"))?.payment.userId
            #expect(owner == "u1")
            let counts = ledger.replicas.counts.withLock { $0 }
            // Each read was answered by the replica or, when it had not replayed the command
            // within half a second, by the primary; on a quiet machine the replica answers.
            #expect(counts.replica + counts.primary == 6)
            #expect(counts.replica >= 1, "\(counts)")
        }
    }

    @Test func aReplicaThatFellBehindIsReadOnlyByCallersWithoutWritesPastIt() async throws {
        try await Self.with { db, writer, standby, replica in
            let first = try await writer.record(Fixture.consumable("P-1"))
            let seenFirst = try await writer.unconsumed(userId: "u1").count
            #expect(first == .recorded && seenFirst == 1)
            _ = try standby.query("SELECT pg_wal_replay_pause()")
            let second = try await writer.record(Fixture.consumable("P-2"))
            #expect(second == .recorded)

            // The writer reads its own write: the replica has not replayed it, so after half a
            // second the primary answers.
            let before = writer.replicas.counts.withLock { $0 }
            let own = try await writer.unconsumed(userId: "u1").map { $0.paymentSeq }
            #expect(own == ["P-1", "P-2"])
            let after = writer.replicas.counts.withLock { $0 }
            #expect(after.primary == before.primary + 1 && after.replica == before.replica)

            // Another ledger, which wrote nothing, reads the replica as it is: one payment. That
            // it does not see P-2 shows the read went to the replica.
            let reader = Ledger(databaseURL: db.conninfo, poolSize: 1, readDatabaseURLs: [replica])
            let stale = try await reader.unconsumed(userId: "u1").map { $0.paymentSeq }
            #expect(stale == ["P-1"])
            // Reports read the replica too.
            let month = AnalyticsQuery(from: CalendarDay("2026-01-01")!, to: CalendarDay("2026-02-01")!)
            let revenue = try await reader.revenue(month).map { $0.payments }
            #expect(revenue == [1])

            // Once replay goes on, the replica catches up and the reader sees both.
            _ = try standby.query("SELECT pg_wal_replay_resume()")
            let deadline = Date().addingTimeInterval(60)
            var caughtUp: [String] = []
            while caughtUp.count < 2, Date() < deadline {
                caughtUp = try await reader.unconsumed(userId: "u1").map { $0.paymentSeq }
                if caughtUp.count < 2 { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(caughtUp == ["P-1", "P-2"])
            await reader.close()
        }
    }

    @Test func aReplicaThatCannotBeReachedLeavesTheQueriesToThePrimary() async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1,
                                readDatabaseURLs: ["host=/nonexistent-socket-dir port=1 dbname=\(db.name) connect_timeout=2"])
            let status = try await ledger.record(Fixture.consumable("P-1"))
            let seen = try await ledger.unconsumed(userId: "u1").map { $0.paymentSeq }
            #expect(status == .recorded && seen == ["P-1"])
            #expect(ledger.replicas.counts.withLock { $0.primary } == 1)
            await ledger.close()
        }
    }

    @Test func theEnvironmentNamesOneOrMoreReplicas() {
        let two = ["LEDGER_READ_DATABASE_URL": "host=a dbname=x ; postgresql://r2/x"]
        #expect(ReadReplicas.urls(fromEnvironment: two) == ["host=a dbname=x", "postgresql://r2/x"])
        #expect(ReadReplicas.urls(fromEnvironment: ["LEDGER_READ_DATABASE_URL": " ; "]) == [])
        #expect(ReadReplicas.urls(fromEnvironment: [:]) == [])
    }
}
