import Foundation
import Postgres
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test func theBinaryCarriesEveryMigrationInOrder() {
        let versions = Migration.all.map(\.version)
        #expect(versions.count >= 4)
        #expect(versions == Array(1...versions.count))
        #expect(Migration.all.allSatisfy { !$0.sql.isEmpty && $0.checksum.count == 64 })
    }

    /// The checksum recorded in `ledger.schema_migrations` must stay what it always was for the same
    /// file, or every existing database would refuse to start: coreutils' `sha256sum` of the file.
    @Test func eachChecksumIsTheSHA256OfItsSchemaFileAsSha256sumComputesIt() throws {
        let schema = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Schema")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum"] + Migration.all.map { schema.appendingPathComponent($0.name).path }
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let expected = output.split(separator: "\n").map { line in
            (name: String(line.split(separator: "/").last ?? ""), checksum: String(line.prefix(64)))
        }
        #expect(expected.map(\.name) == Migration.all.map(\.name))
        #expect(expected.map(\.checksum) == Migration.all.map(\.checksum))
    }

    @Test func migratingTwiceLeavesOneAppliedCopy() async throws {
        try await TestDatabase.with(migrated: false) { db in
            try db.withConnection { c throws in
                #expect(try Migrator().migrate(c).count == Migration.all.count)
                #expect(try Migrator().migrate(c).isEmpty)
                #expect(try c.count("SELECT count(*) FROM ledger.schema_migrations") == Migration.all.count)
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
            #expect(applied.reduce(0, +) == Migration.all.count)
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
                let victim = changed[1]
                changed[1] = try #require(Migration.edited(victim, sql: victim.sql + "\n-- edited\n"))
                #expect(throws: MigrationError.changed(victim.name)) { try Migrator(migrations: changed).migrate(c) }
                let message = "\(MigrationError.changed(victim.name))"
                #expect(message.contains(victim.name))
            }
        }
    }

    @Test func rolesForOperatorsExistAndCannotLogIn() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let rows = try c.query("SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname IN ('ledger_writer', 'ledger_reader') ORDER BY rolname")
                #expect(try rows.map { try $0.decode("rolname", as: String.self) } == ["ledger_reader", "ledger_writer"])
                #expect(try rows.allSatisfy { try !$0.decode("rolcanlogin", as: Bool.self) })
            }
        }
    }
}
