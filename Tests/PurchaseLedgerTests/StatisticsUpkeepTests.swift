import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// No slow start: a new ledger's tables are analysed by the command paths as
/// the log grows (`ledger.refresh_statistics`, `StatisticsUpkeep`), so no session keeps plans
/// made on empty tables. Each test turns autovacuum off for the ledger's tables first: only the
/// ledger's own upkeep can analyse them then, and the test fails without it.
@Suite("Statistics upkeep of a new ledger")
struct StatisticsUpkeepTests {
    @Test func theFunctionAnalysesAtAThousandEventsAndAgainEachTimeTheLogDoubles() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try Self.turnAutovacuumOff(c)
                _ = try c.executeBatch((0..<999).map { .record(Fixture.consumable("P-\($0)"), kind: .purchase) })
                #expect(try Self.refresh(c) == false)
                #expect(try Self.analysedEvents(c) == nil, "under 1,000 events nothing is analysed")

                _ = try c.run(.record(Fixture.consumable("P-999"), kind: .purchase))
                #expect(try Self.refresh(c) == true)
                #expect(try Self.analysedEvents(c) == 1_000)
                #expect(try Self.refresh(c) == false, "the statistics are fresh: nothing to do")

                _ = try c.executeBatch((1_000..<1_999).map { .record(Fixture.consumable("P-\($0)"), kind: .purchase) })
                #expect(try Self.refresh(c) == false, "1,999 events: not yet twice the analysed 1,000")
                _ = try c.run(.record(Fixture.consumable("P-1999"), kind: .purchase))
                #expect(try Self.refresh(c) == true)
                #expect(try Self.analysedEvents(c) == 2_000)
                #expect(try c.count("SELECT reltuples::bigint FROM pg_class WHERE oid = 'ledger.payments'::regclass") == 2_000)
            }
        }
    }

    @Test func ingestAnalysesANewLedgerOnceItPassesAThousandEvents() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try Self.turnAutovacuumOff(c)
                let lines = (0..<1_200).map {
                    AnalyticsFixture.purchase("P-\($0)", product: "gem_100", price: "0.99", at: "2026-01-01T00:00:00Z")
                }
                let outcomes = try c.ingest(lines, batchSize: 200)
                #expect(outcomes.allSatisfy { $0.status == .recorded })
                // Checked after the batch that took the ingest to 1,000 commands, when the log held 1,000 events.
                #expect(try Self.analysedEvents(c) == 1_000)
            }
        }
    }

    @Test func theLibraryAnalysesANewLedgerOnceItPassesAThousandEvents() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in try Self.turnAutovacuumOff(c) }
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 4)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for n in 0..<300 {
                            let status = try await ledger.record(Fixture.consumable("P-\(writer)-\(n)"))
                            #expect(status == .recorded)
                        }
                    }
                }
                try await group.waitForAll()
            }
            await ledger.close()
            try db.withConnection { c throws in
                let analysed = try #require(try Self.analysedEvents(c))
                #expect(analysed >= 1_000 && analysed <= 1_200, "analysed at \(analysed) events")
            }
        }
    }

    private static func refresh(_ c: Connection) throws -> Bool {
        try c.query("SELECT ledger.refresh_statistics() AS analysed")[0].decode("analysed", as: Bool.self)
    }

    /// The row count the planner knows for the log: nil before its first ANALYZE (reltuples -1).
    private static func analysedEvents(_ c: Connection) throws -> Int? {
        let known = try c.count("SELECT reltuples::bigint FROM pg_class WHERE oid = 'ledger.events'::regclass")
        return known < 0 ? nil : known
    }

    private static func turnAutovacuumOff(_ c: Connection) throws {
        try c.executeScript(unsafeSQL: """
            DO $$
            DECLARE t regclass;
            BEGIN
                FOR t IN SELECT oid::regclass FROM pg_class WHERE relnamespace = 'ledger'::regnamespace AND relkind = 'r' LOOP
                    EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = false)', t);
                END LOOP;
            END $$
            """)
        #expect(try analysedEvents(c) == nil, "a new ledger's log has never been analysed")
    }
}
