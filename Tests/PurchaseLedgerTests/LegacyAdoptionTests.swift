import LedgerDemo
import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Databases made by the first releases' migrations (Fixtures/LegacySchema: 0001 … 0009, the
/// files as released) are adopted by today's migrator without losing anything.
@Suite("Adopting databases of the first releases")
struct LegacyAdoptionTests {
    static let legacy = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/LegacySchema")

    /// Makes the database as the migrator of the release with migrations 1…`last` did: each
    /// file in a transaction, recorded with the SHA-256 of its text.
    static func makeLegacy(_ c: Connection, through last: Int) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: legacy.path).filter { $0.hasSuffix(".sql") }.sorted()
        try #require(files.count == 9)
        try c.executeScript(unsafeSQL: """
            SET client_min_messages = warning;
            CREATE SCHEMA IF NOT EXISTS ledger;
            CREATE TABLE ledger.schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            """)
        for (index, name) in files.prefix(last).enumerated() {
            let sql = try String(contentsOf: legacy.appendingPathComponent(name), encoding: .utf8)
            try c.transaction { tx in
                try tx.executeScript(unsafeSQL: sql)
                try tx.query("""
                    INSERT INTO ledger.schema_migrations (version, name, checksum)
                    VALUES (\(index + 1), \(name), encode(sha256(convert_to(\(sql), 'UTF8')), 'hex'))
                    """)
            }
        }
    }

    /// Runs `body` with today's command type and entry point installed in a database of the first
    /// releases, then removes them (the migration makes them again).
    static func withEntryPoint(_ c: Connection, _ body: () throws -> Void) throws {
        let type = try #require(Migration.all.first { $0.name.hasSuffix("_command_type.sql") })
        let entry = Definition.all.filter { $0.path.hasSuffix("commands/execute_commands.sql") || $0.path.hasSuffix("commands/run_command.sql") }.map(\.sql).joined()
        try c.executeScript(unsafeSQL: type.sql + entry)
        try body()
        try c.executeScript(unsafeSQL: """
            DROP FUNCTION ledger.execute_commands(ledger.command[]);
            DROP FUNCTION ledger.run_command(ledger.command);
            DROP TYPE ledger.command;
            """)
    }

    /// What the projections say, in a form that does not depend on their shape.
    static func answers(_ c: Connection) throws -> [String] {
        try c.query("""
            SELECT format('%s %s %s %s %s %s %s', payment_seq, user_id, price, purchase_time, expiry_time, consumed_at, refunded_at) AS p
              FROM ledger.payments ORDER BY payment_seq
            """).map { try $0.decode("p", as: String.self) }
            + c.query("""
            SELECT format('%s %s %s %s', store_code, original_transaction_id, user_id, product_id) AS l
              FROM ledger.lineages ORDER BY 1
            """).map { try $0.decode("l", as: String.self) }
    }

    @Test(arguments: [6, 7, 9])
    func aDatabaseOfTheFirstReleasesIsAdoptedWithItsLogAndAnswers(through last: Int) async throws {
        try await TestDatabase.with(migrated: false) { db in
            try db.withConnection { c throws in
                try Self.makeLegacy(c, through: last)
                // Written by that release's functions: purchases, renewals, consumes, refunds, cancels, restores.
                // One command per transaction, each run by that release's own function: the entry
                // point that today's library calls (ledger.execute_commands and its type) is put
                // in front of them for the writes and taken away before the migration, and a
                // lone command is what it hands straight to the command's function. (On a
                // connection of their own: its statements were prepared with a type that the
                // migration makes again.)
                try db.withConnection { w throws in
                    try Self.withEntryPoint(w) {
                        let outcomes = try w.ingest(Array(DemoGenerator(seed: 5, users: 30)), batchSize: 1)
                        #expect(outcomes.contains { $0.status == .consumed })
                    }
                }
                let events = try c.count("SELECT count(*) FROM ledger.events")
                let before = try Self.answers(c)
                let snapshot = last == 9 ? try LedgerSnapshot(c) : nil
                #expect(before.count > 30)

                let done = try Migrator().migrate(c)
                #expect(done == ["adopted a database of the first releases"] + Migration.all.map(\.name)
                                + ["definitions (\(Definition.all.count) files)", "rebuilt the projections (\(events) events)"])
                #expect(try Self.answers(c) == before)
                if let snapshot { #expect(try LedgerSnapshot(c) == snapshot) }
                #expect(try c.count("SELECT count(*) FROM ledger.events") == events)
                #expect(try ChainVerifier(connection: c).verify().isIntact)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
                // Each event of that release got its owner: the user its data names.
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE user_id <> coalesce(data->>'userId', '')") == 0)
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE user_id <> ''") > 30)
                #expect(try c.query("SELECT name FROM ledger.schema_migrations ORDER BY version").map { try $0.decode("name", as: String.self) }
                        == Migration.all.map(\.name))
                #expect(try c.count("""
                    SELECT count(*) FROM pg_proc WHERE proname IN ('install_projections_0002', 'install_projections_0007',
                                                                   'install_store_projections', 'project_range_0007')
                    """) == 0)
                // The log is append-only again, and what came after that release works.
                #expect(throws: PostgresError.self) { try c.execute("DELETE FROM ledger.events") }
                let link = try c.ingest([#"{"type":"accountLink","userId":"u-1","storeCode":"AS","appAccountToken":"acct-x"}"#])
                #expect(link.map(\.status) == [.recorded])
                #expect(try Migrator().migrate(c).isEmpty)
            }
        }
    }

    /// An object of someone else's on one of the first releases' views stops the adoption: it
    /// is named, and nothing changes.
    @Test func aViewOfSomeoneElsesOnOursStopsTheAdoptionAndChangesNothing() async throws {
        try await TestDatabase.with(migrated: false) { db in
            try db.withConnection { c throws in
                try Self.makeLegacy(c, through: 9)
                try c.executeScript(unsafeSQL: "CREATE VIEW public.finance_report AS SELECT * FROM analytics.revenue_daily")
                do {
                    try Migrator().migrate(c)
                    Issue.record("the adoption dropped a view another view depends on")
                } catch let error as MigrationError {
                    #expect("\(error)".contains("finance_report"), "\(error)")
                }
                #expect(try c.count("SELECT count(*) FROM ledger.schema_migrations WHERE name LIKE '000%'") == 9)
                #expect(try c.count("SELECT count(*) FROM public.finance_report") == 0)
                #expect(try c.count("SELECT count(*) FROM pg_proc WHERE proname = 'install_projections_0007'") == 1)
            }
        }
    }
}
