import Foundation
import LedgerTestSupport
import Postgres

/// LOGIN roles of one test's own, granted `ledger_writer`, `ledger_reader` and `ledger_store`
/// (the roles `ledger migrate` creates for operators to grant), dropped when the test is done. Roles are
/// cluster-wide, so their names are unique. The test server trusts local connections, so no
/// password is needed.
struct LoginRoles {
    let writer: String
    let reader: String
    /// Granted `ledger_store`: the login of the process that verifies the stores' signatures.
    let store: String
    let database: TestDatabase

    /// The conninfo of `database` as `role`.
    func conninfo(_ role: String) -> String { "\(database.conninfo) user=\(role)" }

    func connect(_ role: String) throws -> Connection {
        try Connection.connect(ConnectionConfiguration(conninfo(role)))
    }

    static func with<T>(_ database: TestDatabase, _ body: (LoginRoles) async throws -> T) async throws -> T {
        let suffix = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(10).lowercased()
        let roles = LoginRoles(writer: "lr_writer_\(suffix)", reader: "lr_reader_\(suffix)", store: "lr_store_\(suffix)",
                               database: database)
        let admin = try database.connect()
        defer { admin.close() }
        try admin.query("CREATE ROLE \(identifier: roles.writer) LOGIN IN ROLE ledger_writer")
        defer { _ = try? admin.query("DROP ROLE IF EXISTS \(identifier: roles.writer)") }
        try admin.query("CREATE ROLE \(identifier: roles.reader) LOGIN IN ROLE ledger_reader")
        defer { _ = try? admin.query("DROP ROLE IF EXISTS \(identifier: roles.reader)") }
        try admin.query("CREATE ROLE \(identifier: roles.store) LOGIN IN ROLE ledger_store")
        defer { _ = try? admin.query("DROP ROLE IF EXISTS \(identifier: roles.store)") }
        return try await body(roles)
    }
}

extension Connection {
    /// The SQLSTATE that `sql` fails with, or nil when it succeeds.
    func failure(_ sql: SQL) -> SQLState? {
        do {
            try query(sql)
            return nil
        } catch let error as PostgresError {
            return error.sqlState ?? SQLState("?????")
        } catch {
            return SQLState("?????")
        }
    }
}
