import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("Projection rebuild while the ledger is in use")
struct RebuildUnderLoadTests {
    @Test func aRebuildWhileWritersIngestAndConsumeLosesNothing() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try RebuildFixtures.ingestDemo(c, users: 60)
                try RebuildFixtures.appendPurchases(c, count: 20_000)
            }
            let writers = RebuildWriters(db, count: 3)
            writers.start()
            #expect(try await writers.waitFor(commands: 30))
            let summary = try db.withConnection { c in
                try ProjectionRebuilder(connection: c, batchSize: 2000).rebuild()
            }
            // The writers go on after the swap, on the new tables.
            let after = writers.commands
            #expect(try await writers.waitFor(commands: after + 30))
            try await writers.stop()
            #expect(writers.failures.isEmpty, "\(writers.failures.prefix(5))")
            #expect(summary.caughtUp > 0, "the writers appended nothing during the rebuild")

            try db.withConnection { c throws in
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
                // Every event is in the projections.
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type IN ('PurchaseRecorded', 'RenewalRecorded')")
                        == (try c.count("SELECT count(*) FROM ledger.payments")))
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentConsumed'")
                        == (try c.count("SELECT count(*) FROM ledger.payments WHERE consumed_at IS NOT NULL")))
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentRefunded'")
                        == (try c.count("SELECT count(*) FROM ledger.payments WHERE refunded_at IS NOT NULL")))
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'AutoRenewCancelled'")
                        == (try c.count("SELECT count(*) FROM ledger.auto_renew_changes")))
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PurchasesRestored'")
                        == (try c.count("SELECT count(*) FROM ledger.restores")))
                #expect(try RebuildFixtures.noRebuildSchemasLeft(c))
            }
        }
    }

    @Test func theSwapWaitsForAnAppendStillInFlightAndIncludesIt() async throws {
        try await TestDatabase.with { db in
            _ = try db.withConnection { c throws in try RebuildFixtures.ingestDemo(c, users: 20) }
            // An append whose transaction stays open: its position comes before P-AFTER's, its
            // commit after the replay's snapshot and after the rebuild began to swap.
            let late = try db.connect()
            defer { late.close() }
            try late.executeScript(unsafeSQL: "BEGIN")
            // (One command runs as a single statement: here, inside the open transaction.)
            #expect(try late.run(.record(Fixture.consumable("P-LATE"), kind: .purchase)).status == .recorded)
            try db.withConnection { c throws in
                #expect(try c.run(.record(Fixture.consumable("P-AFTER"), kind: .purchase)).status == .recorded)
            }
            let rebuild = Background {
                try db.withConnection { c in try ProjectionRebuilder(connection: c).rebuild() }
            }
            // Wait until the swap is blocked on the open transaction's locks, then commit it (on
            // a thread of its own, so that no other test can hold the watch up).
            let watch = Background { () throws -> (Bool, String) in
                defer { try? late.executeScript(unsafeSQL: "COMMIT") }
                return try Self.lockWait(of: rebuild, in: db)
            }
            let (blocked, activity) = try #require(try await watch.value())
            #expect(blocked, "\(activity)")
            let summary = try #require(try await rebuild.value())
            #expect(summary.swapAttempts >= 1 && summary.caughtUp >= 1)
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE payment_seq IN ('P-LATE', 'P-AFTER')") == 2)
                #expect(try c.count("""
                    SELECT count(*) FROM ledger.events a, ledger.events b
                     WHERE a.stream = 'payment:P-LATE' AND b.stream = 'payment:P-AFTER' AND a.position < b.position
                    """) == 1)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }

    /// A vacuum of a table the swap replaces (autovacuum's, most often, on the tables the last
    /// rebuild swapped in) holds it in share update exclusive mode. The swap waits for it in that
    /// mode, which writers' locks do not meet, and swaps at its first attempt, where a short wait
    /// would give up at once and retry until the vacuum ends (a minute at most, then the rebuild
    /// fails).
    @Test func theSwapWaitsForAVacuumOfATableItReplacesAndSwapsAtOnce() async throws {
        try await TestDatabase.with { db in
            _ = try db.withConnection { c throws in try RebuildFixtures.ingestDemo(c, users: 20) }
            let vacuum = try db.connect()
            defer { vacuum.close() }
            try vacuum.executeScript(unsafeSQL: "BEGIN; LOCK TABLE ledger.lineage_states IN SHARE UPDATE EXCLUSIVE MODE")
            // The swap's long waits are twice deadlock_timeout: 2 s at the default, which a loaded
            // machine's watch below once outlasted (two attempts). At 10 s the long wait outlasts
            // any watch, and a short wait (under half of it, shared by some twenty tables: about
            // 240 ms) still gives up before the vacuum ends.
            let rebuild = Background {
                try db.withConnection { c in
                    try c.executeScript(unsafeSQL: "SET deadlock_timeout = '10s'")
                    defer { try? c.executeScript(unsafeSQL: "RESET deadlock_timeout") }
                    return try ProjectionRebuilder(connection: c).rebuild()
                }
            }
            // Once the swap waits on the table, the vacuum goes on a while, then ends.
            let watch = Background { () throws -> (Bool, String) in
                defer { try? vacuum.executeScript(unsafeSQL: "COMMIT") }
                let (waited, activity) = try Self.lockWait(of: rebuild, in: db)
                if waited { Thread.sleep(forTimeInterval: 0.3) }
                return (waited, activity)
            }
            let (waited, activity) = try #require(try await watch.value())
            #expect(waited, "the swap never waited for the vacuum's lock: \(activity)")
            let summary = try #require(try await rebuild.value())
            #expect(summary.swapAttempts == 1, "\(summary)")
            try db.withConnection { c throws in
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }

    /// Watches, on a connection of its own, until the rebuild waits for a lock (true): a table
    /// lock, or the writers' gate (`ledger.writers_gate`) that an open command holds. Or until
    /// it ends or a minute passes (false, and what the database's sessions were doing).
    static func lockWait<T>(of rebuild: Background<T>, in db: TestDatabase) throws -> (Bool, String) {
        let observer = try db.connect()
        defer { observer.close() }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !rebuild.isFinished {
            if try observer.count("""
                SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name = 'ledger rebuild'
                   AND wait_event_type = 'Lock' AND (query LIKE 'LOCK TABLE%' OR query LIKE '%writers_gate%')
                """) > 0 {
                return (true, "")
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return (false, try observer.query("""
            SELECT coalesce(string_agg(concat_ws(' ', application_name, state, wait_event_type, left(query, 60)), '; '), '') AS a
              FROM pg_stat_activity WHERE datname = current_database()
            """)[0].decode("a", as: String.self))
    }
}
