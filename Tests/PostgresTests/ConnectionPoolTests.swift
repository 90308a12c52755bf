import Postgres
import Synchronization
import Testing

@Suite("Connection pool")
struct ConnectionPoolTests {
    @Test func sixtyFourConcurrentTasksShareAtMostFourBackends() async throws {
        try await withTestDatabase { database in
            let pool = ConnectionPool(configuration: database.configuration, size: 4)
            let results = try await withThrowingTaskGroup(of: (Int, Int, Int32).self) { group in
                for input in 0..<64 {
                    group.addTask {
                        try await pool.withConnection { connection in
                            let row = try connection.query("SELECT \(input)::int * 2 AS doubled, pg_sleep(0.01)")[0]
                            return (input, try row.decode("doubled", as: Int.self), connection.serverProcessID)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 64)
            #expect(results.allSatisfy { $0.1 == $0.0 * 2 })
            let backends = Set(results.map(\.2))
            #expect(backends.count <= 4)
            #expect(backends.count >= 1)
            await pool.close()
        }
    }

    @Test func terminatedIdleBackendIsReplacedBeforeTheNextCall() async throws {
        try await withTestDatabase { database in
            let pool = ConnectionPool(configuration: database.configuration, size: 1)
            let first = try await pool.withConnection { $0.serverProcessID }
            try terminateBackend(first)
            // The server's FATAL message and the closed socket are noticed while checking out the idle connection,
            // so not even the first call after the kill fails.
            let second = try await pool.withConnection { connection in
                (try connection.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int32.self))
            }
            #expect(second != first)
            let third = try await pool.withConnection { $0.serverProcessID }
            #expect(third == second)
            await pool.close()
        }
    }

    @Test func backendKilledDuringACallFailsThatCallOnceThenAFreshConnectionServes() async throws {
        try await withTestDatabase { database in
            let pool = ConnectionPool(configuration: database.configuration, size: 1)
            let victim = try await pool.withConnection { $0.serverProcessID }
            let failure = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { connection in
                    try terminateBackend(connection.serverProcessID)
                    return try connection.query("SELECT 1 AS one").count
                }
            }
            #expect(failure?.kind == .connectionBroken)
            let next = try await pool.withConnection { connection in
                (connection.serverProcessID, try connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self))
            }
            #expect(next.0 != victim)
            #expect(next.1 == 1)
            await pool.close()
        }
    }

    @Test func transactionBodyErrorIsRethrownUnchangedAndRolledBack() async throws {
        struct Declined: Error, Equatable {}
        try await withTestDatabase { database in
            let pool = ConnectionPool(configuration: database.configuration, size: 2)
            try await pool.withConnection { try $0.executeScript(unsafeSQL: "CREATE TABLE t (n int)") }
            await #expect(throws: Declined()) {
                try await pool.withTransaction { tx in
                    try tx.execute("INSERT INTO t (n) VALUES (\(1))")
                    throw Declined()
                }
            }
            let count = try await pool.withTransaction { try $0.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) }
            #expect(count == 0)
            await pool.close()
        }
    }

    @Test func closedPoolRefusesCallsAndWaitersAreReleased() async throws {
        try await withTestDatabase { database in
            let pool = ConnectionPool(configuration: database.configuration, size: 1)
            _ = try await pool.withConnection { $0.serverProcessID }
            await pool.close()
            let error = await #expect(throws: PostgresError.self) { try await pool.withConnection { _ in 1 } }
            #expect(error?.kind == .client)
            #expect(error?.message == "pool closed")
        }
    }

    @Test func cancelledWaiterLeavesTheQueue() async throws {
        try await withTestDatabase { database in
            let pool = ConnectionPool(configuration: database.configuration, size: 1)
            // The holder keeps the only connection until the test lets go of an advisory lock,
            // so the waiter is still queued when it is cancelled, however slow the machine.
            let gate = try database.connect()
            defer { gate.close() }
            try gate.query("SELECT pg_advisory_lock(42)")
            let holding = Mutex(false)
            let holder = Task {
                try await pool.withConnection { connection in
                    holding.withLock { $0 = true }
                    try connection.query("SELECT pg_advisory_lock(42), pg_advisory_unlock(42)")
                }
            }
            while !holding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            let waiter = Task { try await pool.withConnection { $0.serverProcessID } }
            try await Task.sleep(for: .milliseconds(50))
            waiter.cancel()
            await #expect(throws: CancellationError.self) { try await waiter.value }
            try gate.query("SELECT pg_advisory_unlock(42)")
            try await holder.value
            #expect(try await pool.withConnection { $0.serverProcessID } > 0)
            await pool.close()
        }
    }

    @Test func unreachableServerFailsEveryCallAndFreesTheSlot() async throws {
        let pool = ConnectionPool(configuration: ConnectionConfiguration("postgresql://nobody:pw@127.0.0.1:1/x"), size: 1)
        for _ in 0..<2 {
            let error = await #expect(throws: PostgresError.self) { try await pool.withConnection { $0.serverProcessID } }
            #expect(error?.kind == .connection)
        }
        await pool.close()
    }
}
