import Foundation
import Postgres

/// A rebuild on a Citus cluster.
///
/// A rebuild compares snapshots: the replay applies what its transaction's snapshot shows, and
/// each catch-up pass then applies what the last snapshot did not show (`ledger.project_unseen`).
/// On a cluster the snapshot it keeps is the coordinator's, while the events it applies are what
/// each worker's own snapshot shows, taken moments later, on each connection the transaction
/// opens to a worker: Citus has no snapshot across nodes. A transaction that commits between the
/// two is then both replayed and, absent from the kept snapshot, applied again; and one that Citus
/// committed on the coordinator and not yet on a worker (the moment between its commit and the
/// worker's `COMMIT PREPARED`, or until Citus's recovery after a crash) is in the kept snapshot
/// and not replayed.
///
/// So on a cluster each of those transactions starts with the writers' gate held alone (every
/// command takes it shared, to its transaction's very end, after Citus's `COMMIT PREPARED`), when
/// no transaction is in doubt on a worker (`ledger.prepared_in_doubt()`), and opens its one
/// connection per worker (`citus.max_adaptive_executor_pool_size` = 1) before the gate opens
/// again. Writers wait for that moment (tens of milliseconds), not for the replay. On one server
/// nothing of this runs.
extension ProjectionRebuilder {
    /// Whether the log is distributed (`ledger.distributed_log()`).
    func isDistributed() throws -> Bool {
        try connection.query("SELECT ledger.distributed_log() AS d")[0].decode("d", as: Bool.self)
    }

    /// `connection.repeatableRead(body)`, whose snapshots agree on every node of a cluster (above).
    func consistentRepeatableRead<T>(distributed: Bool, _ body: (Connection) throws -> T) throws -> T {
        guard distributed else { return try connection.repeatableRead(body) }
        try holdGateWithNothingInDoubt()
        var holding = true
        defer { if holding { _ = try? connection.query("SELECT pg_advisory_unlock(ledger.writers_gate())") } }
        return try connection.repeatableRead { c in
            // The coordinator's snapshot comes with this first statement; each worker's with the
            // next, on the one connection to it that every later statement uses.
            try c.execute("SELECT set_config('citus.max_adaptive_executor_pool_size', '1', true)")
            _ = try c.query("SELECT count(*) FROM ledger.events WHERE position < 0")
            _ = try c.query("SELECT pg_advisory_unlock(ledger.writers_gate())")
            holding = false
            return try body(c)
        }
    }

    /// Takes the writers' gate alone (a session lock, outside any transaction) at a moment when no
    /// transaction is in doubt on a worker; waits for such a moment up to `swapDeadline`.
    private func holdGateWithNothingInDoubt() throws {
        let deadline = Date().addingTimeInterval(swapDeadline)
        while true {
            _ = try connection.query("SELECT pg_advisory_lock(ledger.writers_gate())")
            let inDoubt = try Self.inDoubt(on: connection)
            if inDoubt == 0 { return }
            _ = try connection.query("SELECT pg_advisory_unlock(ledger.writers_gate())")
            try waitForCitusRecovery(inDoubt: inDoubt, deadline: deadline)
        }
    }

    /// Inside the swap's transaction, with the gate held: throws `InDoubt` when a transaction is
    /// still prepared on a worker (its events would be invisible to the swap's catch-up).
    func refuseInDoubt(_ c: Connection) throws {
        let inDoubt = try Self.inDoubt(on: c)
        if inDoubt > 0 { throw InDoubt(count: inDoubt) }
    }

    /// Before another try, while `inDoubt` transactions are still prepared on a worker: Citus's
    /// recovery finishes them (every citus.recover_2pc_interval). Past `deadline`, throws
    /// `preparedInDoubt`.
    func waitForCitusRecovery(inDoubt: Int, deadline: Date) throws {
        guard Date() < deadline else { throw RebuildError.preparedInDoubt(count: inDoubt, seconds: Int(swapDeadline)) }
        logger.notice("rebuild: waiting for Citus to commit transactions still prepared on a worker",
                      metadata: ["transactions": "\(inDoubt)"])
        Thread.sleep(forTimeInterval: 0.2)
    }

    /// `ledger.prepared_in_doubt()`: the transactions committed on the coordinator and still
    /// prepared on a worker.
    private static func inDoubt(on c: Connection) throws -> Int {
        try c.query("SELECT ledger.prepared_in_doubt() AS n")[0].decode("n", as: Int.self)
    }

    struct InDoubt: Error { let count: Int }
}
