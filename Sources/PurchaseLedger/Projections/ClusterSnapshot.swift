import Foundation
import Logging
import Postgres

/// REPEATABLE READ transactions whose snapshots agree on every node of a Citus cluster, for the
/// work that reads the whole log and keeps what its snapshot showed: a rebuild's replay and
/// catch-up passes, and a verify.
///
/// On a cluster a transaction's snapshot is the coordinator's, while the rows it reads are what
/// each worker's own snapshot shows, taken moments later, on each connection the transaction
/// opens to a worker: Citus has no snapshot across nodes. A 2PC transaction that commits between
/// two of them is seen on one node and not on another; and one that Citus committed on the
/// coordinator and not yet on a worker (the moment between its commit and the worker's `COMMIT
/// PREPARED`, or until Citus's recovery after a crash) is committed for the coordinator and
/// invisible on the worker. A rebuild would replay such a transaction twice or never; a verify
/// would compare a state no commit left.
///
/// So on a cluster each of those transactions starts with the writers' gate held alone (every
/// command takes it shared, to its transaction's very end, after Citus's `COMMIT PREPARED`), when
/// no transaction is in doubt on a worker (`ledger.prepared_in_doubt()`), and opens its one
/// connection per worker (`citus.max_adaptive_executor_pool_size` = 1) before the gate opens
/// again. Writers wait for that moment (tens of milliseconds), not for the work. On one server
/// nothing of this runs.
struct ClusterSnapshot {
    let connection: Connection
    /// What waits, as the log names it ("rebuild", "verify").
    let task: String
    /// How long to wait for a transaction in doubt before `RebuildError.preparedInDoubt`.
    let patience: TimeInterval
    let logger: Logger

    /// Whether the log is distributed (`ledger.distributed_log()`).
    static func isDistributed(_ c: Connection) throws -> Bool {
        try c.query("SELECT ledger.distributed_log() AS d")[0].decode("d", as: Bool.self)
    }

    /// Runs `body` in a REPEATABLE READ transaction, committed, or rolled back when `rolledBack`
    /// (a verify's scratch). `beforeSnapshot` runs first in it, where a statement that takes no
    /// snapshot (`LOCK TABLE`) still comes before the transaction's snapshot.
    func repeatableRead<T>(distributed: Bool, rolledBack: Bool = false,
                           beforeSnapshot: (Connection) throws -> Void = { _ in },
                           _ body: (Connection) throws -> T) throws -> T {
        let run = { (work: (Connection) throws -> T) throws -> T in
            rolledBack ? try connection.rolledBackRepeatableRead(work) : try connection.repeatableRead(work)
        }
        guard distributed else {
            return try run { c in
                try beforeSnapshot(c)
                return try body(c)
            }
        }
        var workersGates = try holdGateWithNothingInDoubt()
        var holding = true
        defer {
            if holding { _ = try? connection.query("SELECT pg_advisory_unlock(ledger.writers_gate())") }
            for gate in workersGates { gate.close() }
        }
        return try run { c in
            // SET and LOCK take no snapshot. The coordinator's comes with the count, and each
            // worker's with it, on the one connection to it that every later statement uses.
            try c.executeScript(unsafeSQL: "SET LOCAL citus.max_adaptive_executor_pool_size = 1")
            try beforeSnapshot(c)
            _ = try c.query("SELECT count(*) FROM ledger.events WHERE position < 0")
            _ = try c.query("SELECT pg_advisory_unlock(ledger.writers_gate())")
            holding = false
            for gate in workersGates { gate.close() }
            workersGates = []
            return try body(c)
        }
    }

    /// Takes the writers' gate alone (a session lock, outside any transaction) at a moment when no
    /// transaction is in doubt on a worker; waits for such a moment up to `patience`. Returns the
    /// connections that hold the workers' gates (``holdWorkersGates()``); closing one opens its
    /// gate.
    private func holdGateWithNothingInDoubt() throws -> [Connection] {
        let deadline = Date().addingTimeInterval(patience)
        while true {
            _ = try connection.query("SELECT pg_advisory_lock(ledger.writers_gate())")
            let workers: [Connection]
            do {
                workers = try holdWorkersGates()
            } catch {
                _ = try? connection.query("SELECT pg_advisory_unlock(ledger.writers_gate())")
                throw error
            }
            let inDoubt = try Self.inDoubt(on: connection)
            if inDoubt == 0 { return workers }
            for gate in workers { gate.close() }
            _ = try connection.query("SELECT pg_advisory_unlock(ledger.writers_gate())")
            try waitForCitusRecovery(inDoubt: inDoubt, deadline: deadline)
        }
    }

    /// On a distributed log, where commands run on the users' workers
    /// (`ledger.commands_on_workers()`), each worker's writers' gate as well, after the
    /// coordinator's: a command run on a worker takes the gate there and not the coordinator's.
    /// A session lock on each worker, taken over a connection of the ledger's own to the address
    /// `pg_dist_node` names, with this connection's user, database and settings (Citus's own
    /// connections to the workers are not the ledger's to hold); the worker's snapshot, taken by
    /// the transaction's first statement on it, comes while the gate is held. Inside that
    /// transaction the gate could not be taken before the snapshot, nor let go before its end.
    /// None while the appends refuse a worker's position: no command runs on a worker then.
    private func holdWorkersGates() throws -> [Connection] {
        let workers = try connection.query("""
            SELECT n.groupid, n.nodename, n.nodeport FROM pg_catalog.pg_dist_node AS n
             WHERE n.groupid <> 0 AND n.noderole = 'primary' AND n.isactive
               AND ledger.commands_on_workers()
             ORDER BY n.groupid
            """)
        var held: [Connection] = []
        do {
            for row in workers {
                let configuration = try connection.configuration(host: try row.decode("nodename"), port: try row.decode("nodeport"),
                                                                 applicationName: "ledger \(task): writers' gate")
                let gate = try Connection.connect(configuration)
                held.append(gate)
                _ = try gate.query("SELECT pg_advisory_lock(ledger.writers_gate())")
            }
        } catch {
            for gate in held { gate.close() }
            throw error
        }
        return held
    }

    /// Inside a transaction that holds the gate: throws `InDoubt` when a transaction is still
    /// prepared on a worker (its events would be invisible to the transaction).
    static func refuseInDoubt(_ c: Connection) throws {
        let inDoubt = try inDoubt(on: c)
        if inDoubt > 0 { throw InDoubt(count: inDoubt) }
    }

    /// Before another try, while `inDoubt` transactions are still prepared on a worker: Citus's
    /// recovery finishes them (every citus.recover_2pc_interval). Past `deadline`, throws
    /// `RebuildError.preparedInDoubt`.
    func waitForCitusRecovery(inDoubt: Int, deadline: Date) throws {
        guard Date() < deadline else { throw RebuildError.preparedInDoubt(count: inDoubt, seconds: Int(patience)) }
        logger.notice("\(task): waiting for Citus to commit transactions still prepared on a worker",
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
