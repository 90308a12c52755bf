import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The library runs a command again after a deadlock, as `ledger ingest` does: a caller of
/// `Ledger` never sees a 40P01 for a command that nothing else refused.
///
/// The waits are long (five minutes) because the call under test is a task, and in a whole
/// package run the other suites' blocking libpq calls can keep Swift's two cooperative threads
/// busy for minutes before it starts (a CI run timed out at one minute).
@Suite("Library retries")
struct LibraryRetryTests {
    /// The library's connections find a deadlock after 10 s of waiting, the other side's after
    /// 60 s: PostgreSQL checks once per wait, after deadlock_timeout, so the side whose check
    /// comes first (with the cycle closed by then) is the one cancelled.
    static let ledgerTimeout = " options='-c deadlock_timeout=10s'"

    /// A restore of P-1 and P-2 takes the payments' locks in the ledger's one order
    /// (`ledger.lock_keys`): the first, then it waits for the second, which another transaction
    /// holds; that transaction, which breaks the order, then asks for the first: a deadlock,
    /// deterministic. The
    /// restore's backend finds the cycle first and is cancelled (see ``ledgerTimeout``). The
    /// library runs the restore again once the other transaction committed, and it records both.
    @Test func aRestoreThatLosesADeadlockRunsAgainAndRecords() async throws {
        try await TestDatabase.with { db in
            // The holder's transaction sees pg_stat_activity as it was when it first looked: the
            // watcher, outside any transaction, sees it now.
            let holder = try db.connect(), watcher = try db.connect()
            defer { [holder, watcher].forEach { $0.close() } }
            let deadlocksBefore = try deadlocks(watcher)
            let order = try watcher.query("""
                SELECT k FROM unnest(ARRAY['payment:P-1', 'payment:P-2']) AS k ORDER BY hashtextextended(k, 0)
                """).map { try $0.decode("k", as: String.self) }
            let (first, second) = (order[0], order[1])
            try holder.executeScript(unsafeSQL: "SET deadlock_timeout = '60s'; BEGIN")
            try holder.query("SELECT pg_advisory_xact_lock(hashtextextended(\(second), 0))")

            let log = LogCapture()
            let ledger = Ledger(databaseURL: db.conninfo + Self.ledgerTimeout, poolSize: 2, logger: log.logger())
            let restore = Task {
                try await ledger.restore(userId: "u1", storeCode: .appStore,
                                         purchases: [Fixture.consumable("P-1"), Fixture.consumable("P-2")])
            }
            // On a thread of its own, so that the cycle closes well within the restore's
            // deadlock_timeout however busy Swift's cooperative threads are: once the restore
            // waits for the second, ask for the first (this waits until the restore's
            // transaction is cancelled), then commit; the restore, run again, then records both.
            let side = Background { () throws -> Bool in
                try waitOnThread { try advisoryWaiters(watcher) == 1 }
                try holder.query("SELECT pg_advisory_xact_lock(hashtextextended(\(first), 0))")
                try holder.executeScript(unsafeSQL: "COMMIT")
                return true
            }
            try #require(try await side.value(timeout: 600) == true, "the other transaction did not get through")
            let result = try await restore.value
            await ledger.close()
            #expect(result.recorded == ["P-1", "P-2"])
            #expect(log.records.contains { $0.level == .notice && $0.message == "running the commands again after a deadlock" },
                    "\(log.records.map(\.message))")
            try await waitUntil("the server counts the deadlock") { try deadlocks(watcher) > deadlocksBefore }
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 2)
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PurchasesRestored'") == 1)
            }
        }
    }

    /// A consume is not idempotent, but a deadlock committed nothing: it runs again too, and
    /// consumes once.
    @Test func aConsumeThatLosesADeadlockRunsAgainAndConsumesOnce() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c in _ = try c.run(.record(Fixture.consumable("P-1"), kind: .purchase)) }
            let holder = try db.connect(), watcher = try db.connect()
            defer { [holder, watcher].forEach { $0.close() } }
            try holder.executeScript(unsafeSQL: "SET deadlock_timeout = '60s'; BEGIN")
            // The holder locks the stream row of P-1 first; the consume locks the payment's row,
            // then waits for the stream row (to append); the holder then asks for the payment's
            // row: a cycle, which the consume, waiting longer, is the first to find.
            try holder.query("SELECT 1 FROM ledger.streams WHERE stream = 'payment:P-1' FOR UPDATE")
            let ledger = Ledger(databaseURL: db.conninfo + Self.ledgerTimeout, poolSize: 2)
            let consume = Task { try await ledger.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1") }
            let side = Background { () throws -> Bool in
                try waitOnThread { try rowWaiters(watcher) == 1 }
                try holder.query("SELECT 1 FROM ledger.payments WHERE payment_seq = 'P-1' FOR UPDATE")
                try holder.executeScript(unsafeSQL: "COMMIT")
                return true
            }
            try #require(try await side.value(timeout: 600) == true, "the other transaction did not get through")
            let outcome = try await consume.value
            await ledger.close()
            guard case .consumed = outcome else {
                Issue.record("the consume answered \(outcome)")
                return
            }
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentConsumed'") == 1)
            }
        }
    }
}

extension LibraryRetryTests {
    /// A purchase whose claim of its paymentSeq another user's purchase made first, as happens on
    /// a Citus cluster whose commands run on the workers when the other's two-phase commit ends
    /// on the key lock's node before the registry's (`CommandRetry.isLostClaim`): the keys' locks
    /// here are made not to meet (`ledger.lock_keys` takes only the writers' gate), so the
    /// library's purchase reads no claim, waits for the other's on the registry's unique key, and
    /// fails there once it commits. The library runs it again, and it is refused `USER_INVALID`,
    /// the contract's answer, where without the retry the caller got a unique violation.
    @Test func aPurchaseThatLosesItsClaimToAnotherUsersRunsAgainAndIsRefused() async throws {
        try await TestDatabase.with { db in
            let holder = try db.connect(), watcher = try db.connect()
            defer { [holder, watcher].forEach { $0.close() } }
            try watcher.takeTheKeysLocksOut()
            try holder.executeScript(unsafeSQL: "BEGIN")
            #expect(try holder.run(.record(Fixture.consumable("P-1", user: "u1"), kind: .purchase)).status == .recorded)

            let log = LogCapture()
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2, logger: log.logger())
            let record = Task { try await ledger.record(Fixture.consumable("P-1", user: "u2")) }
            try await waitUntil("the purchase waits for the other's claim", unless: record) { try rowWaiters(watcher) == 1 }
            try holder.executeScript(unsafeSQL: "COMMIT")
            let result = await record.result
            await ledger.close()
            guard case .failure(let error as LedgerError) = result else {
                Issue.record("the purchase answered \(result)")
                return
            }
            #expect(error.code == .userInvalid, "\(error)")
            #expect(log.records.contains { $0.level == .notice && $0.message == "running the commands again after a key claimed by another command first" },
                    "\(log.records.map(\.message))")
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.payment_keys WHERE user_id = 'u1'") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PurchaseRecorded'") == 1)
            }
        }
    }
}

extension LibraryRetryTests {
    /// Which unique violations are a lost claim: one in a key registry, named by the table (one
    /// server) or by a shard of it (a Citus worker names the shard it wrote, the table's name
    /// and `_` and the shard's id), in the ledger's schema. A user's table, the keys' locks (whose
    /// rows are locked, never claimed), another schema, another error or no table are not.
    @Test func aLostClaimIsAUniqueViolationInARegistryOrOneOfItsShards() {
        func violation(_ table: String?, schema: String? = "ledger", state: SQLState = .uniqueViolation) -> PostgresError {
            PostgresError(kind: .server, message: "duplicate key value violates unique constraint", sqlState: state,
                          table: table, schema: schema)
        }
        for registry in CommandRetry.registries {
            #expect(CommandRetry.isLostClaim(violation(registry)), "\(registry)")
            #expect(CommandRetry.isLostClaim(violation(registry + "_102413")), "\(registry)_102413")
        }
        #expect(CommandRetry.isLostClaim(violation("payment_keys_7", schema: nil)))
        for table in ["payments", "payments_102008", "key_locks", "key_locks_102500", "payment_keys_x", "payment_keys102413", "_102413"] {
            #expect(!CommandRetry.isLostClaim(violation(table)), "\(table)")
        }
        #expect(!CommandRetry.isLostClaim(violation("payment_keys", schema: "public")))
        #expect(!CommandRetry.isLostClaim(violation(nil)))
        #expect(!CommandRetry.isLostClaim(violation("payment_keys_102413", state: .deadlockDetected)))
    }

    /// A violation that Citus relays from a worker it reached over a connection of its own has
    /// no table, schema or constraint: its message names the constraint, which is a lost claim
    /// when it is a registry's primary key or a shard of it (as the races across shards of
    /// `scripts/dev citus check` meet it: `transaction_keys_pkey_102572`).
    @Test func aLostClaimRelayedByCitusIsReadFromItsMessage() {
        func relayed(_ message: String, state: SQLState = .uniqueViolation) -> PostgresError {
            PostgresError(kind: .server, message: message, sqlState: state)
        }
        func violating(_ constraint: String) -> String { "duplicate key value violates unique constraint \"\(constraint)\"" }
        for registry in CommandRetry.registries {
            #expect(CommandRetry.isLostClaim(relayed(violating(registry + "_pkey_102572"))), "\(registry)")
            #expect(CommandRetry.isLostClaim(relayed(violating(registry + "_pkey"))), "\(registry)")
        }
        #expect(CommandRetry.isLostClaim(PostgresError(kind: .server, message: "x", sqlState: .uniqueViolation,
                                                       constraint: "token_keys_pkey_7")))
        for constraint in ["payments_pkey_102008", "key_locks_pkey_102500", "api_keys_key_sha256_key", "payment_keys_pkeyx",
                           "payment_keys_other_102413", "transaction_keys_pkey_102572\" x \"y"] {
            #expect(!CommandRetry.isLostClaim(relayed(violating(constraint))), "\(constraint)")
        }
        #expect(!CommandRetry.isLostClaim(relayed("duplicate key value violates unique constraint")))
        #expect(!CommandRetry.isLostClaim(relayed(violating("payment_keys_pkey"), state: .deadlockDetected)))
    }
}

private func deadlocks(_ c: Connection) throws -> Int {
    try c.execute("SELECT pg_stat_clear_snapshot()")
    return try c.count("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
}

/// Backends of this database waiting for an advisory lock.
private func advisoryWaiters(_ c: Connection) throws -> Int {
    try c.count("""
        SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database() AND l.pid <> pg_backend_pid()
        """)
}

/// Backends of this database waiting for a row or transaction lock.
private func rowWaiters(_ c: Connection) throws -> Int {
    try c.count("""
        SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype IN ('transactionid', 'tuple') AND NOT l.granted AND a.datname = current_database()
           AND l.pid <> pg_backend_pid()
        """)
}

/// Polls `condition`; fails when it stays false for `timeout` seconds, or as soon as `task`
/// (the call under test) ended, with what it returned or threw.
private func waitUntil<T: Sendable>(_ what: String, timeout: TimeInterval = 300, unless task: Task<T, Error>? = nil,
                                    _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    let ended = Flag()
    if let task { Task { _ = await task.result; ended.set() } }
    while try !condition() {
        if ended.isSet, let task { throw TestSetupError("\(what): the call ended first: \(await task.result)") }
        guard Date() < deadline else { throw TestSetupError("timed out: \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

private func waitUntil(_ what: String, timeout: TimeInterval = 300, _ condition: () throws -> Bool) async throws {
    try await waitUntil(what, timeout: timeout, unless: Task<Int, Error>?.none, condition)
}

/// Polls `condition` on the calling thread (not a task), up to 300 s.
private func waitOnThread(_ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(300)
    while try !condition() {
        guard Date() < deadline else { throw TestSetupError("timed out waiting for a lock waiter") }
        usleep(10_000)
    }
}

private final class Flag: @unchecked Sendable {
    // @unchecked: the one stored Bool is read and written under the lock.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
