import Foundation
import LedgerTestSupport
import Postgres

/// Finds the backends of a database that wait for a lock, to know that a `ledger` process got
/// exactly as far as a test's held lock lets it.
enum LockWaiters {
    /// The process IDs of at least `count` backends of the watcher's database that wait for a
    /// lock, other than `besides`; with `blockedBy`, only those that this backend blocks (other
    /// lock waits, such as a relation extension between concurrent inserts, come and go on a
    /// loaded machine and are not what a test waits for). Polls for up to `timeout` seconds.
    static func wait(count: Int = 1, besides: [Int32], blockedBy: Int32? = nil, timeout: TimeInterval = 60,
                     _ connect: () throws -> Connection) throws -> [Int32] {
        let watcher = try connect()
        defer { watcher.close() }
        let others = "{" + besides.map(String.init).joined(separator: ",") + "}"
        let deadline = Date().addingTimeInterval(timeout)
        var found: [Int32] = []
        while Date() < deadline {
            found = try watcher.query("""
                SELECT pid FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock'
                   AND pid <> ALL(\(others)::int[]) AND pid <> pg_backend_pid()
                   AND (\(blockedBy.map(Int.init))::int IS NULL OR \(blockedBy.map(Int.init))::int = ANY(pg_blocking_pids(pid)))
                 ORDER BY pid
                """).map { try $0.decode("pid", as: Int32.self) }
            if found.count >= count { return found }
            usleep(20_000)
        }
        throw TestSetupError("\(found.count) of \(count) backends waited for a lock within \(Int(timeout)) s")
    }
}
