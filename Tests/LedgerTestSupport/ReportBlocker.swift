import Foundation
import Postgres

/// Makes a report wait on the database for as long as a test wants, as one waits behind a
/// rebuild's lock: holds `ACCESS EXCLUSIVE` on `ledger.entitled_spans` (which the subscribers
/// and churn reports read) in an open transaction. Commands on consumables never touch that
/// table, so they go on meanwhile. Also watches `pg_stat_activity` for the reports' statements.
public final class ReportBlocker {
    private let holder: Connection
    private let watcher: Connection
    private var held = true

    /// Takes the lock on `database`.
    public init(_ database: TestDatabase) throws {
        holder = try database.connect()
        watcher = try database.connect()
        try holder.executeScript(unsafeSQL: "BEGIN; LOCK TABLE ledger.entitled_spans IN ACCESS EXCLUSIVE MODE;")
    }

    deinit {
        release()
        watcher.close()
    }

    /// Ends the lock's transaction: the reports waiting on it go on.
    public func release() {
        guard held else { return }
        held = false
        _ = try? holder.executeScript(unsafeSQL: "ROLLBACK")
        holder.close()
    }

    /// Statements of the analytics reports running on this database now (waiting or working),
    /// from every connection but this watcher's.
    public func reportsRunning() throws -> Int {
        try watcher.count("""
            SELECT count(*) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()
               AND state = 'active' AND query LIKE '%FROM analytics.%'
            """)
    }

    /// Waits until `condition` holds for ``reportsRunning()``, at most `timeout` seconds;
    /// returns whether it held.
    public func wait(timeout: TimeInterval, until condition: (Int) -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(try reportsRunning()) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition(try reportsRunning())
    }
}
