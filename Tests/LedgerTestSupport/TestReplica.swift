import Foundation
import Postgres

/// The streaming replica of the test server (LEDGER_TEST_REPLICA, a conninfo without dbname;
/// `scripts/dev test` starts one with `scripts/dev replica`).
public enum TestReplica {
    /// The replica's conninfo without dbname; throws when none is configured.
    public static var server: String {
        get throws {
            guard let replica = ProcessInfo.processInfo.environment["LEDGER_TEST_REPLICA"], !replica.isEmpty else {
                throw TestSetupError("LEDGER_TEST_REPLICA is not set: run the tests with scripts/dev test, which starts a replica")
            }
            return replica
        }
    }

    /// A connection to the replica's copy of `database`, once the replica has replayed its
    /// creation (at most a minute), and that copy's conninfo.
    public static func connect(to database: TestDatabase) async throws -> (connection: Connection, conninfo: String) {
        let conninfo = "\(try server) dbname=\(database.name)"
        let deadline = Date().addingTimeInterval(60)
        while true {
            do {
                return (try Connection.connect(ConnectionConfiguration(conninfo)), conninfo)
            } catch {
                guard Date() < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
