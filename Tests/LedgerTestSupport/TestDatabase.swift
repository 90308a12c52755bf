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
    public static func with<T>(migrated: Bool = true, _ body: (TestDatabase) async throws -> T) async throws -> T {
        let server = try server
        let name = "lt_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
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
/// added it (`0010_event_owner.sql`) is compared with one taken after.
public struct LedgerSnapshot: Equatable {
    public let events: Int
    public let projections: String

    public init(_ connection: Connection) throws {
        events = try connection.query("SELECT count(*)::bigint AS n FROM ledger.events")[0].decode("n")
        projections = try connection.query("""
            SELECT concat_ws('|',
              (SELECT string_agg(p::text, ',' ORDER BY payment_seq) FROM ledger.payments p),
              (SELECT string_agg(l::text, ',' ORDER BY store_code, original_transaction_id) FROM ledger.lineages l),
              (SELECT string_agg(c::text, ',' ORDER BY position) FROM ledger.auto_renew_changes c),
              (SELECT string_agg(r::text, ',' ORDER BY position) FROM ledger.restores r),
              (SELECT string_agg(b::text, ',' ORDER BY position) FROM ledger.billing_states b),
              (SELECT string_agg(n::text, ',' ORDER BY position) FROM ledger.notifications n),
              (SELECT string_agg(x::text, ',' ORDER BY position) FROM ledger.products x),
              (SELECT string_agg(a::text, ',' ORDER BY position) FROM ledger.account_links a),
              (SELECT string_agg(a::text, ',' ORDER BY position) FROM ledger.payment_aliases a),
              (SELECT string_agg((s.stream, s.version, s.head_hash)::text, ',' ORDER BY stream) FROM ledger.streams s)) AS all
            """)[0].decode("all", as: String?.self) ?? ""
    }
}
