import LedgerDemo
import Foundation
import Postgres
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Migrations")
struct MigrationTests {
    static let schema = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Schema")

    @Test func theBinaryCarriesEveryMigrationAndDefinitionInOrder() {
        let versions = Migration.all.map(\.version)
        #expect(!versions.isEmpty && versions == Array(1...versions.count))
        #expect(Migration.all.allSatisfy { !$0.sql.isEmpty && $0.checksum.count == 64 })
        let groups = Definition.all.map(\.group)
        #expect(Set(groups) == Set(Definition.groups))
        #expect(groups == groups.sorted { Definition.groups.firstIndex(of: $0)! < Definition.groups.firstIndex(of: $1)! })
        #expect(Definition.all.count > 40)
    }

    /// The checksum recorded in `ledger.schema_migrations` must stay what it always was for the same
    /// file, or every existing database would refuse to start: coreutils' `sha256sum` of the file.
    @Test func eachChecksumIsTheSHA256OfItsSchemaFileAsSha256sumComputesIt() throws {
        let files = Migration.all.map { ("migrations/" + $0.name, $0.checksum) } + Definition.all.map { ("definitions/" + $0.path, $0.checksum) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum"] + files.map { Self.schema.appendingPathComponent($0.0).path }
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        #expect(output.split(separator: "\n").map { String($0.prefix(64)) } == files.map(\.1))
    }

    /// Every function the schema makes has one definition, in the file named after it: what
    /// `CREATE ... FUNCTION` statements the files hold, and what a migrated database has.
    @Test func everyFunctionIsDefinedInOneFileNamedAfterIt() async throws {
        var definedIn: [String: [String]] = [:]
        let create = /CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([a-z_]+)\.([a-z_0-9]+)\s*\(/.ignoresCase()
        for file in Migration.all.map({ ("migrations/" + $0.name, $0.sql) }) + Definition.all.map({ ($0.path, $0.sql) }) {
            for match in file.1.matches(of: create) {
                definedIn["\(match.output.1).\(match.output.2)", default: []].append(file.0)
            }
        }
        #expect(definedIn.filter { $0.value.count > 1 }.isEmpty, "defined twice: \(definedIn.filter { $0.value.count > 1 })")
        for (name, files) in definedIn {
            #expect(files.first?.hasSuffix("/" + name.split(separator: ".")[1] + ".sql") == true, "\(name) is in \(files)")
        }
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let functions = try c.query("""
                    SELECT n.nspname || '.' || p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                     WHERE n.nspname IN ('ledger', 'analytics') ORDER BY 1
                    """).map { try $0.decode("name", as: String.self) }
                #expect(functions.count > 35)
                // project_range and project_positions are made per projection schema by
                // install_project_range, from its one text, refresh_spans by
                // install_entitled_spans and refresh_states by install_lineage_states.
                let missing = Set(functions).subtracting(definedIn.keys)
                    .subtracting(["ledger.project_range", "ledger.project_positions", "ledger.refresh_spans",
                                  "ledger.refresh_states"])
                #expect(missing.isEmpty, "functions without a definition file: \(missing.sorted())")
            }
        }
    }

    @Test func migratingTwiceAppliesOnce() async throws {
        try await TestDatabase.with(migrated: false) { db in
            try db.withConnection { c throws in
                #expect(try Migrator().migrate(c) == Migration.all.map(\.name) + ["definitions (\(Definition.all.count) files)"])
                #expect(try Migrator().migrate(c).isEmpty)
                #expect(try c.count("SELECT count(*) FROM ledger.schema_migrations") == Migration.all.count)
                #expect(try c.count("SELECT count(*) FROM ledger.schema_definitions") == Definition.all.count)
                // Advice for a Citus cluster's operator is for a cluster alone (citus_check_advice
                // has the cluster's cases), and the server's roles may ask.
                #expect(try Ledger.clusterAdvice(on: c).isEmpty)
                for role in ["ledger_reader", "ledger_writer"] {
                    try c.transaction { tx in
                        try tx.execute("SET LOCAL ROLE \(identifier: role)")
                        #expect(try Ledger.clusterAdvice(on: tx).isEmpty, "as \(role)")
                    }
                }
            }
        }
    }

    @Test func fourMigratorsAtOnceLeaveOneAppliedCopy() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let applied = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask { try db.withConnection { try Migrator().migrate($0).count } }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(applied.reduce(0, +) == Migration.all.count + 1)
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.schema_migrations") == Migration.all.count)
                #expect(try c.count("SELECT count(*) FROM pg_proc WHERE proname = 'record_payment'") == 1)
            }
        }
    }

    @Test func aChangedAppliedMigrationIsRefusedByName() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                var changed = Migration.all
                let victim = changed[0]
                changed[0] = try #require(Migration.edited(victim, sql: victim.sql + "\n-- edited\n"))
                #expect(throws: MigrationError.changed(victim.name)) { try Migrator(migrations: changed).migrate(c) }
                let message = "\(MigrationError.changed(victim.name))"
                #expect(message.contains(victim.name))
            }
        }
    }

    /// A changed definition is applied (all of them are, in order) and recorded; one that fails
    /// changes nothing and is named.
    @Test func aChangedDefinitionIsAppliedAndABrokenOneChangesNothing() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                var definitions = Definition.all
                let index = try #require(definitions.firstIndex { $0.path == "commands/rejected.sql" })
                let comment = "COMMENT ON FUNCTION ledger.rejected(text, text, text) IS 'edited';"
                definitions[index] = Definition.edited(definitions[index], sql: definitions[index].sql + comment + "\n")
                #expect(try Migrator(definitions: definitions).migrate(c) == ["definitions (\(definitions.count) files)"])
                #expect(try c.query("SELECT obj_description('ledger.rejected(text, text, text)'::regprocedure) AS d")[0]
                    .decode("d", as: String?.self) == "edited")
                #expect(try Migrator(definitions: definitions).migrate(c).isEmpty)

                definitions[index] = Definition.edited(definitions[index], sql: "CREATE OR REPLACE FUNCTION ledger.rejected( syntax error")
                #expect(throws: MigrationError.self) { try Migrator(definitions: definitions).migrate(c) }
                do {
                    try Migrator(definitions: definitions).migrate(c)
                } catch let error as MigrationError {
                    #expect("\(error)".hasPrefix("Schema/definitions/commands/rejected.sql failed, nothing was changed"), "\(error)")
                }
                #expect(try c.query("SELECT obj_description('ledger.rejected(text, text, text)'::regprocedure) AS d")[0]
                    .decode("d", as: String?.self) == "edited")
                // Back to this build's definitions.
                #expect(try Migrator().migrate(c) == ["definitions (\(Definition.all.count) files)"])
            }
        }
    }

    /// Projection tables are derived: a change of their definitions rebuilds them from the log.
    @Test func aChangedProjectionDefinitionRebuildsTheProjections() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = try c.ingest(Array(DemoGenerator(seed: 3, users: 20)))
                #expect(outcomes.contains { $0.status == .consumed })
                let events = try c.count("SELECT count(*) FROM ledger.events")
                let before = try LedgerSnapshot(c)
                var definitions = Definition.all
                let index = try #require(definitions.firstIndex { $0.path == "projections/install_projections.sql" })
                definitions[index] = Definition.edited(definitions[index], sql: definitions[index].sql + "-- a new shape\n")
                let done = try Migrator(definitions: definitions).migrate(c)
                #expect(done == ["definitions (\(definitions.count) files)", "rebuilt the projections (\(events) events)"])
                #expect(try LedgerSnapshot(c) == before)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }

    /// Appends run the new projection statements against the live tables until the rebuild's
    /// swap. So new definitions that write what the live tables cannot take, with no migration
    /// changing them, are refused: every gap is named, and nothing changes. Once a migration has
    /// changed the live tables, the same definitions are applied and the projections rebuilt.
    @Test func newProjectionDefinitionsTheLiveTablesCannotTakeAreRefusedByName() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.ingest(Array(DemoGenerator(seed: 3, users: 5)))
                // The tables of a release before: a column this build writes is missing, one has
                // another type, and one this build no longer writes is required.
                try c.executeScript(unsafeSQL: """
                    ALTER TABLE ledger.billing_states DROP COLUMN user_id;
                    ALTER TABLE ledger.restores ALTER COLUMN item_count TYPE bigint;
                    ALTER TABLE ledger.payments ADD COLUMN legacy text NOT NULL DEFAULT '';
                    ALTER TABLE ledger.payments ALTER COLUMN legacy DROP DEFAULT;
                    ALTER TABLE ledger.payments ADD COLUMN retired text NOT NULL DEFAULT '';
                    UPDATE ledger.schema_definitions SET checksum = 'the release before'
                     WHERE path = 'projections/install_project_range.sql';
                    """)
                let gaps = [
                    "ledger.billing_states has no column user_id (text)",
                    "ledger.payments.legacy is NOT NULL without a default, and the new definitions do not write it",
                    "ledger.restores.item_count is bigint, not integer",
                ]
                #expect(throws: MigrationError.projectionShape(gaps)) { try Migrator().migrate(c) }
                #expect("\(MigrationError.projectionShape(gaps))".contains("nothing was changed: " + gaps.joined(separator: "; ")))
                #expect(try c.query("""
                    SELECT checksum FROM ledger.schema_definitions WHERE path = 'projections/install_project_range.sql'
                    """)[0].decode("checksum", as: String.self) == "the release before")
                #expect(try c.count("SELECT count(*) FROM pg_namespace WHERE nspname = 'ledger_shape'") == 0)

                // The migration the release should have had.
                try c.executeScript(unsafeSQL: """
                    ALTER TABLE ledger.billing_states ADD COLUMN user_id text;
                    UPDATE ledger.billing_states b SET user_id = e.user_id FROM ledger.events e WHERE e.position = b.position;
                    ALTER TABLE ledger.restores ALTER COLUMN item_count TYPE integer;
                    ALTER TABLE ledger.payments DROP COLUMN legacy;
                    """)
                let events = try c.count("SELECT count(*) FROM ledger.events")
                #expect(try Migrator().migrate(c) == ["definitions (\(Definition.all.count) files)",
                                                       "rebuilt the projections (\(events) events)"])
                #expect(try c.count("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'ledger' AND column_name = 'retired'") == 0)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }

    @Test func rolesForOperatorsExistAndCannotLogIn() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let rows = try c.query("""
                    SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname IN ('ledger_writer', 'ledger_reader', 'ledger_store')
                     ORDER BY rolname
                    """)
                #expect(try rows.map { try $0.decode("rolname", as: String.self) } == ["ledger_reader", "ledger_store", "ledger_writer"])
                #expect(try rows.allSatisfy { try !$0.decode("rolcanlogin", as: Bool.self) })
                // ledger_store is a writer too; the writer is not a store.
                #expect(try c.query("SELECT pg_has_role('ledger_store', 'ledger_writer', 'MEMBER') AS m")[0].decode("m", as: Bool.self))
                #expect(try !c.query("SELECT pg_has_role('ledger_writer', 'ledger_store', 'MEMBER') AS m")[0].decode("m", as: Bool.self))
            }
        }
    }
}
