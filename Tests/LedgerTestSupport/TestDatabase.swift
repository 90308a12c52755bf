import Foundation
import Postgres
import PurchaseLedger


/// A fresh, migrated database of its own for one test, on the server named by
/// LEDGER_TEST_SERVER (a conninfo without dbname; `scripts/dev test` sets it).
public struct TestDatabase: Sendable {
    public let name: String
    public let conninfo: String

    public static var server: String {
        get throws {
            guard let server = ProcessInfo.processInfo.environment["LEDGER_TEST_SERVER"], !server.isEmpty else {
                throw TestSetupError("LEDGER_TEST_SERVER is not set: run the tests with scripts/dev test")
            }
            return server
        }
    }

    /// Creates the database, runs `body`, drops it. A migrated database (the default) is a
    /// clone of the process's migrated template (`TemplateDatabase`); with `migrated: false`
    /// it is empty.
    ///
    /// With LEDGER_TEST_CREATE_DB_CMD and LEDGER_TEST_DROP_DB_CMD set (shell commands, `{db}` the
    /// database's name), those make and drop each database, and a migrated one is migrated
    /// here rather than cloned: a Citus cluster's database needs the extension and the node list
    /// on every node, which a clone of one node's template does not have (`scripts/dev test` runs
    /// the model-based test so, with `scripts/dev citus createdb`).
    public static func with<T>(migrated: Bool = true, _ body: (TestDatabase) async throws -> T) async throws -> T {
        let server = try server
        let name = "lt_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let environment = ProcessInfo.processInfo.environment
        if let create = environment["LEDGER_TEST_CREATE_DB_CMD"], let drop = environment["LEDGER_TEST_DROP_DB_CMD"],
           !create.isEmpty, !drop.isEmpty {
            let database = TestDatabase(name: name, conninfo: "\(server) dbname=\(name)")
            defer { try? shell(drop, database: name) }
            // One at a time: Citus hands each database's DDL to the workers, and two databases'
            // migrations at once update the same shared catalog rows there (the roles), which
            // fails one of them ("tuple concurrently updated").
            try setup.withLock {
                try shell(create, database: name)
                if migrated {
                    try database.withConnection { c in _ = try Migrator().migrate(c) }
                }
            }
            return try await body(database)
        }
        let template = migrated ? try TemplateDatabase.ensure(on: server) : nil
        let admin = try Connection.connect(ConnectionConfiguration("\(server) dbname=postgres"))
        if let template {
            try admin.execute("CREATE DATABASE \(identifier: name) TEMPLATE \(identifier: template)")
        } else {
            try admin.execute("CREATE DATABASE \(identifier: name)")
        }
        let database = TestDatabase(name: name, conninfo: "\(server) dbname=\(name)")
        defer {
            _ = try? admin.execute("DROP DATABASE IF EXISTS \(identifier: name) WITH (FORCE)")
            admin.close()
        }
        return try await body(database)
    }

    private static let setup = NSLock()

    /// Runs a LEDGER_TEST_*_DB_CMD command with `{db}` replaced by the database's name.
    private static func shell(_ command: String, database: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command.replacingOccurrences(of: "{db}", with: database)]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSetupError("'\(command)' for \(database) exited with \(process.terminationStatus)")
        }
    }

    public func connect() throws -> Connection {
        try Connection.connect(ConnectionConfiguration(conninfo))
    }

    /// Runs `body` on a new connection and closes it.
    public func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try connect()
        defer { connection.close() }
        return try body(connection)
    }
}

public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Everything a command can write, to check that a refusal wrote nothing. A stream's owner is left
/// out: it is set with the stream's first event, and a snapshot taken before the migration that
/// added it (`0010_event_owner.sql`) is compared with one taken after. So are the owners of the
/// projection rows that got one later (auto-renew and billing changes, notifications, aliases),
/// compared before and after the rebuild that added them.
public struct LedgerSnapshot: Equatable {
    public let events: Int
    public let projections: String

    public init(_ connection: Connection) throws {
        events = try connection.query("SELECT count(*)::bigint AS n FROM ledger.events")[0].decode("n")
        projections = try connection.query("""
            SELECT concat_ws('|',
              (SELECT string_agg(p::text, ',' ORDER BY payment_seq) FROM ledger.payments p),
              (SELECT string_agg(l::text, ',' ORDER BY store_code, original_transaction_id) FROM ledger.lineages l),
              (SELECT string_agg((to_jsonb(c) - 'user_id')::text, ',' ORDER BY position) FROM ledger.auto_renew_changes c),
              (SELECT string_agg(r::text, ',' ORDER BY position) FROM ledger.restores r),
              (SELECT string_agg((to_jsonb(b) - 'user_id')::text, ',' ORDER BY position) FROM ledger.billing_states b),
              (SELECT string_agg((to_jsonb(n) - 'user_id')::text, ',' ORDER BY position) FROM ledger.notifications n),
              (SELECT string_agg(x::text, ',' ORDER BY position) FROM ledger.products x),
              (SELECT string_agg(a::text, ',' ORDER BY position) FROM ledger.account_links a),
              (SELECT string_agg((to_jsonb(a) - 'user_id')::text, ',' ORDER BY position) FROM ledger.payment_aliases a),
              (SELECT string_agg((s.stream, s.version, s.head_hash)::text, ',' ORDER BY stream) FROM ledger.streams s)) AS all
            """)[0].decode("all", as: String?.self) ?? ""
    }
}
