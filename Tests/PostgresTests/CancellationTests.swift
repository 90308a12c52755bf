import Postgres
import Synchronization
import Testing

/// `withConnection(cancellable: true)`: cancelling the caller's task stops its work on the
/// server and gives the connection back usable; and `PoolShare`.
@Suite("Cancellation and pool shares")
struct CancellationTests {
    /// Polls `pg_stat_activity` until a statement containing `text` runs (or none does, with
    /// `running: false`), at most five minutes, and looks once more at the end; returns whether
    /// it came to be. Generous: beside the other suites the cooperative threads may be held for
    /// long, and only a failure waits that long.
    private func wait(for text: String, running: Bool = true, on watcher: Connection) async throws -> Bool {
        func holds() throws -> Bool {
            let count = try watcher.query("""
                SELECT count(*)::int AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
                   AND position(\(text) IN query) > 0
                """)[0].decode("n", as: Int.self)
            return (count > 0) == running
        }
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            if try holds() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try holds()
    }

    @Test func cancellingTheTaskStopsItsStatementAndTheConnectionServesAgain() async throws {
        try await withTestDatabase { database in
            let watcher = try database.connect()
            defer { watcher.close() }
            let pool = ConnectionPool(configuration: database.configuration, size: 1)
            let backend = try await pool.withConnection { $0.serverProcessID }
            let sleeper = Task {
                try await pool.withConnection(cancellable: true) { try $0.query("SELECT pg_sleep(60) AS slept").count }
            }
            #expect(try await wait(for: "pg_sleep(60)", on: watcher))
            let start = ContinuousClock.now
            sleeper.cancel()
            await #expect(throws: CancellationError.self) { try await sleeper.value }
            #expect(ContinuousClock.now - start < .seconds(30))
            #expect(try await wait(for: "pg_sleep(60)", running: false, on: watcher))
            let next = try await pool.withConnection { connection in
                (connection.serverProcessID, try connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self))
            }
            #expect(next.0 == backend && next.1 == 1)
            await pool.close()
        }
    }

    /// A body that swallows the cancelled statement's error cannot go on: its next statement is
    /// not sent, and its transaction rolls back.
    @Test func aCancelledBodySendsNoMoreStatementsAndItsTransactionRollsBack() async throws {
        try await withTestDatabase { database in
            let watcher = try database.connect()
            defer { watcher.close() }
            try watcher.execute("CREATE TABLE marks (n int)")
            let pool = ConnectionPool(configuration: database.configuration, size: 1)
            let body = Task {
                try await pool.withTransaction(cancellable: true) { tx in
                    try tx.execute("INSERT INTO marks VALUES (1)")
                    _ = try? tx.query("SELECT pg_sleep(60) AS slept")
                    try tx.execute("INSERT INTO marks VALUES (2)")
                }
            }
            #expect(try await wait(for: "pg_sleep(60)", on: watcher))
            body.cancel()
            await #expect(throws: CancellationError.self) { try await body.value }
            #expect(try watcher.query("SELECT count(*)::int AS n FROM marks")[0].decode("n", as: Int.self) == 0)
            #expect(try await pool.withConnection { try $0.query("SELECT 1 AS one").count } == 1)
            await pool.close()
        }
    }

    @Test func aTaskCancelledBeforeItsTurnRunsNothing() async throws {
        try await withTestDatabase { database in
            let pool = ConnectionPool(configuration: database.configuration, size: 1)
            let ran = Mutex(false)
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await pool.withConnection(cancellable: true) { _ in ran.withLock { $0 = true } }
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(!ran.withLock { $0 })
            await pool.close()
        }
    }

    /// Without `cancellable` a body, once started, runs to its end (a command shared by several
    /// callers must not stop because one of them left).
    @Test func aCallThatIsNotCancellableRunsToItsEnd() async throws {
        try await withTestDatabase { database in
            let watcher = try database.connect()
            defer { watcher.close() }
            try watcher.execute("SELECT pg_advisory_lock(7)")
            let pool = ConnectionPool(configuration: database.configuration, size: 1)
            let waiter = Task {
                try await pool.withConnection { try $0.query("SELECT pg_advisory_lock(7) AS locked").count }
            }
            #expect(try await wait(for: "pg_advisory_lock(7) AS locked", on: watcher))
            waiter.cancel()
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await wait(for: "pg_advisory_lock(7) AS locked", on: watcher))
            try watcher.execute("SELECT pg_advisory_unlock(7)")
            #expect(try await waiter.value == 1)
            await pool.close()
        }
    }

    /// A share of one connection of a pool of two: its second caller waits for the first, while
    /// any other caller takes the second connection at once.
    @Test func aShareHoldsAtMostItsLimitAndLeavesTheRestOfThePool() async throws {
        try await withTestDatabase { database in
            let holder = try database.connect()
            defer { holder.close() }
            try holder.execute("SELECT pg_advisory_lock(42)")
            let pool = ConnectionPool(configuration: database.configuration, size: 2)
            let share = PoolShare(of: pool, limit: 1)
            let first = Task { try await share.withConnection { try $0.query("SELECT pg_advisory_lock(42)").count } }
            let second = Task { try await share.withConnection { try $0.query("SELECT 2 AS two").count } }
            let deadline = ContinuousClock.now + .seconds(300)
            while share.statistics.waiting == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(share.statistics.inUse == 1 && share.statistics.waiting == 1)
            // The pool's other connection is free for everyone else.
            #expect(try await pool.withConnection { try $0.query("SELECT 1 AS one").count } == 1)
            #expect(share.statistics.inUse == 1 && share.statistics.waiting == 1)
            try holder.execute("SELECT pg_advisory_unlock(42)")
            #expect(try await first.value == 1)
            #expect(try await second.value == 1)
            #expect(share.statistics.inUse == 0 && share.statistics.waiting == 0)
            await pool.close()
        }
    }

    @Test func aCallerCancelledWhileWaitingForTheShareLeavesTheLine() async throws {
        try await withTestDatabase { database in
            let holder = try database.connect()
            defer { holder.close() }
            try holder.execute("SELECT pg_advisory_lock(42)")
            let pool = ConnectionPool(configuration: database.configuration, size: 2)
            let share = PoolShare(of: pool, limit: 1)
            let first = Task { try await share.withConnection { try $0.query("SELECT pg_advisory_lock(42)").count } }
            let waiting = Task { try await share.withConnection { _ in 2 } }
            let deadline = ContinuousClock.now + .seconds(300)
            while share.statistics.waiting == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            #expect(share.statistics.inUse == 1 && share.statistics.waiting == 0)
            try holder.execute("SELECT pg_advisory_unlock(42)")
            #expect(try await first.value == 1)
            #expect(try await share.withConnection { _ in 3 } == 3)
            await pool.close()
        }
    }
}
