import Foundation
import Postgres
import Testing

/// A throwaway database on the server named by `LEDGER_TEST_SERVER`, so tests can run in parallel.
struct TestDatabase: Sendable {
    let name: String
    let configuration: ConnectionConfiguration

    /// `LEDGER_TEST_SERVER`: a libpq conninfo without dbname. A missing value fails the test; it never skips.
    static func serverConninfo() throws -> String {
        let value = ProcessInfo.processInfo.environment["LEDGER_TEST_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
        return try #require(
            value,
            "LEDGER_TEST_SERVER is not set. It must be a libpq conninfo without dbname; in the repository run: eval \"$(scripts/dev env)\""
        )
    }

    /// The maintenance database, for CREATE/DROP DATABASE and for killing backends.
    static func adminConfiguration() throws -> ConnectionConfiguration {
        ConnectionConfiguration(try serverConninfo(), database: "postgres", applicationName: "postgres-tests-admin")
    }

    static func create() throws -> TestDatabase {
        let name = "pgtest_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let admin = try Connection.connect(adminConfiguration())
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \(identifier: name)")
        return TestDatabase(
            name: name,
            configuration: ConnectionConfiguration(try serverConninfo(), database: name, applicationName: "postgres-tests"))
    }

    func drop() {
        guard let admin = try? Connection.connect(Self.adminConfiguration()) else { return }
        defer { admin.close() }
        _ = try? admin.execute("DROP DATABASE IF EXISTS \(identifier: name) WITH (FORCE)")
    }

    func connect() throws -> Connection {
        try Connection.connect(configuration)
    }
}

/// Runs `body` with a fresh database that is dropped afterwards, whatever happens.
func withTestDatabase<R>(_ body: (TestDatabase) async throws -> R) async throws -> R {
    let database = try TestDatabase.create()
    defer { database.drop() }
    return try await body(database)
}

/// Runs `body` with a connection to a fresh database.
func withTestConnection<R>(_ body: (Connection) async throws -> R) async throws -> R {
    try await withTestDatabase { database in
        let connection = try database.connect()
        defer { connection.close() }
        return try await body(connection)
    }
}

/// Terminates a backend from the maintenance database and waits until it has exited, so that its
/// FATAL message and the closed socket have reached the client.
func terminateBackend(_ pid: Int32) throws {
    let admin = try Connection.connect(TestDatabase.adminConfiguration())
    defer { admin.close() }
    let terminated = try admin.query("SELECT pg_terminate_backend(\(Int(pid))) AS ok")
    #expect(try terminated[0].decode("ok", as: Bool.self))
    for _ in 0..<500 {
        let remaining = try admin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = \(Int(pid))")
        if try remaining[0].decode("n", as: Int.self) == 0 { return }
        usleep(10_000)
    }
    Issue.record("backend \(pid) did not exit within 5 s")
}
