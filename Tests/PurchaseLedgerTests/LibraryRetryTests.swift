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
    /// A restore of P-1 and P-2 takes the lock of P-1, then waits for P-2's, which another
    /// transaction holds; that transaction then asks for P-1's: a deadlock, deterministic. The
    /// restore has waited longer, so its backend finds the cycle first and is cancelled (the other
    /// side's deadlock_timeout is longer still). The library runs the restore again: it waits for
    /// the other transaction, which now has both locks and commits, then records both payments.
    @Test func aRestoreThatLosesADeadlockRunsAgainAndRecords() async throws {
        try await TestDatabase.with { db in
            // The holder's transaction sees pg_stat_activity as it was when it first looked: the
            // watcher, outside any transaction, sees it now.
            let holder = try db.connect(), watcher = try db.connect()
            defer { [holder, watcher].forEach { $0.close() } }
            let deadlocksBefore = try deadlocks(watcher)
            try holder.executeScript(unsafeSQL: "SET deadlock_timeout = '30s'; BEGIN")
            try holder.query("SELECT pg_advisory_xact_lock(hashtextextended('payment:P-2', 0))")

            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2)
            let restore = Task {
                try await ledger.restore(userId: "u1", storeCode: .appStore,
                                         purchases: [Fixture.consumable("P-1"), Fixture.consumable("P-2")])
            }
            try await waitUntil("the restore waits for P-2", unless: restore) { try advisoryWaiters(watcher) == 1 }
            // Closes the cycle. This waits until the restore's transaction is cancelled.
            let closing = Background { try holder.query("SELECT pg_advisory_xact_lock(hashtextextended('payment:P-1', 0))") }
            try #require(try await closing.value(timeout: 300) != nil, "the deadlock was not broken")
            // The restore runs again and waits for the holder, which now has both locks.
            try await waitUntil("the restore runs again", unless: restore) { try advisoryWaiters(watcher) == 1 }
            try holder.executeScript(unsafeSQL: "COMMIT")

            let result = try await restore.value
            await ledger.close()
            #expect(result.recorded == ["P-1", "P-2"])
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
            try holder.executeScript(unsafeSQL: "SET deadlock_timeout = '30s'; BEGIN")
            // The holder locks the stream row of P-1 first; the consume locks the payment's row,
            // then waits for the stream row (to append); the holder then asks for the payment's
            // row: a cycle, which the consume, waiting longer, is the first to find.
            try holder.query("SELECT 1 FROM ledger.streams WHERE stream = 'payment:P-1' FOR UPDATE")
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2)
            let consume = Task { try await ledger.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1") }
            try await waitUntil("the consume waits for the stream row", unless: consume) { try rowWaiters(watcher) == 1 }
            let closing = Background { try holder.query("SELECT 1 FROM ledger.payments WHERE payment_seq = 'P-1' FOR UPDATE") }
            try #require(try await closing.value(timeout: 300) != nil, "the deadlock was not broken")
            try holder.executeScript(unsafeSQL: "COMMIT")
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

private final class Flag: @unchecked Sendable {
    // @unchecked: the one stored Bool is read and written under the lock.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
