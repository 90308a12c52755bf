import Foundation
import Logging
import Postgres

/// Rebuilds the projections from the event log without stopping appends or queries.
///
/// 1. In one REPEATABLE READ transaction, `ledger.install_projections('ledger_rebuild')` creates
///    shadow tables and the log is replayed into them in batches by
///    `ledger_rebuild.project_range`: the statements the live append path runs.
/// 2. Without locks, `ledger.project_unseen` applies the events that committed since.
/// 3. In one short transaction: lock the live projection tables, lock `ledger.events` against
///    appends (waiting for those in flight), apply the last unseen events, move the live tables
///    out and the shadow tables into `ledger`, point dependent views at them, drop the old ones.
///
/// Nothing in `ledger` changes before step 3 commits: a rebuild killed at any moment leaves the
/// live projections as they were, and the next one drops the leftover shadow schema and starts
/// again. A session advisory lock keeps two rebuilds of one database apart.
public struct ProjectionRebuilder {
    /// The schema that holds the shadow tables while they are built.
    public static let shadowSchema = "ledger_rebuild"
    /// Where the live tables go for the instant before they are dropped (inside the swap).
    static let retiredSchema = "ledger_retired"
    /// The session advisory lock key (the bytes of "LEDGRBLD").
    static let lockKey: Int64 = 0x4C45_4447_5242_4C44

    /// The projection sets to rebuild.
    public var projections: [ProjectionSet]
    /// Events per replay statement.
    public var batchSize: Int
    /// How long the swap may keep trying to take its locks before giving up.
    public var swapDeadline: TimeInterval = 60
    /// Where the swap's attempts that could not take their locks are logged (silent by default).
    public var logger: Logger = .silent
    let connection: Connection

    /// - Parameters:
    ///   - connection: a connection of the projections' owner (the role that ran `ledger migrate`),
    ///     used for the whole rebuild and not shared meanwhile.
    ///   - projections: the sets to rebuild (today there is one, `.ledger`).
    ///   - batchSize: events per `project_range` call.
    public init(connection: Connection, projections: [ProjectionSet] = ProjectionSet.allCases,
                batchSize: Int = 250_000) {
        self.connection = connection
        self.projections = projections
        self.batchSize = max(1, batchSize)
    }

    /// Rebuilds and swaps. `progress` is called after every batch and at each phase.
    /// Throws `RebuildError.alreadyRunning` when another rebuild of the database is running.
    @discardableResult
    public func rebuild(progress: (ReplayProgress) -> Void = { _ in }) throws -> RebuildSummary {
        let started = Date()
        try connection.execute("SELECT set_config('application_name', 'ledger rebuild', false)")
        try Self.takeLock(connection)
        defer { _ = try? connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))") }
        guard try connection.query("SELECT to_regprocedure('ledger.project_unseen(text, text)') IS NOT NULL AS ok")[0]
            .decode("ok", as: Bool.self) else { throw RebuildError.notMigrated }

        try dropLeftovers()
        do {
            let replay = ShadowReplay(schema: Self.shadowSchema, batchSize: batchSize)
            // On a distributed log the indexes are built after the replay's commit: Citus runs no
            // schema change on a table that the transaction wrote shard by shard in parallel.
            let distributed = try ClusterSnapshot.isDistributed(connection)
            let outcome = try clusterSnapshot.repeatableRead(distributed: distributed) { c in
                try replay.run(on: c, deferIndexes: true, keysKept: projections.keysUsedByReplay, rebuildIndexes: !distributed,
                               unlogged: false, progress: progress)
            }
            if distributed {
                try connection.transaction { c in
                    try replay.buildIndexes(outcome.deferredIndexes, on: c, events: outcome.events, progress: progress)
                }
            }
            let replayed = Date()
            var summary = RebuildSummary(replayed: outcome.events, lastPosition: outcome.lastPosition,
                                         replaySeconds: replayed.timeIntervalSince(started))
            // Catch up without locks until little is left for the swap to do under its lock.
            var seen = outcome.snapshot
            for _ in 0..<8 {
                progress(ReplayProgress(phase: .catchingUp, eventsDone: outcome.events + summary.caughtUp,
                                        eventsTotal: outcome.events))
                let pass = try catchUp(after: seen)
                seen = pass.snapshot
                summary.caughtUp += pass.applied
                if pass.applied < 1000 { break }
            }
            progress(ReplayProgress(phase: .swapping, eventsDone: outcome.events + summary.caughtUp,
                                    eventsTotal: outcome.events))
            let swap = try swapWithRetries(seen: &seen, summary: &summary)
            summary.caughtUp += swap
            summary.underLock = swap
            summary.seconds = Date().timeIntervalSince(started)
            return summary
        } catch {
            // The live projections are untouched; leave no shadow behind when the connection allows.
            if !connection.isBroken { _ = try? dropLeftovers() }
            throw error
        }
    }

    /// One catch-up pass in a REPEATABLE READ transaction: applies what `seen` did not show and
    /// returns the pass's own snapshot, which becomes the next `seen`.
    func catchUp(after seen: String) throws -> (snapshot: String, applied: Int) {
        try clusterSnapshot.repeatableRead(distributed: try ClusterSnapshot.isDistributed(connection)) { c in
            let snapshot = try c.query("SELECT ledger.log_seen() AS s")[0].decode("s", as: String.self)
            let applied = try c.query("SELECT ledger.project_unseen(\(Self.shadowSchema), \(seen)) AS n")[0]
                .decode("n", as: Int.self)
            return (snapshot, applied)
        }
    }

    /// Snapshots that agree on every node of a cluster, for the replay and the catch-up passes.
    var clusterSnapshot: ClusterSnapshot {
        ClusterSnapshot(connection: connection, task: "rebuild", patience: swapDeadline, logger: logger)
    }

    /// Drops what a killed or failed rebuild left: the shadow schema (and a retired one, which a
    /// committed swap never leaves).
    private func dropLeftovers() throws {
        try connection.executeScript(unsafeSQL: "SET client_min_messages = warning")
        try connection.execute("DROP SCHEMA IF EXISTS \(identifier: Self.shadowSchema) CASCADE")
        try connection.execute("DROP SCHEMA IF EXISTS \(identifier: Self.retiredSchema) CASCADE")
    }

    /// Takes the rebuild's session advisory lock or throws `alreadyRunning` with the holder's pid.
    static func takeLock(_ connection: Connection) throws {
        let locked = try connection.query("SELECT pg_try_advisory_lock(\(lockKey)) AS ok")[0].decode("ok", as: Bool.self)
        guard !locked else { return }
        let holder = try connection.query("""
            SELECT pid FROM pg_locks
             WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND classid = \(Int64(lockKey >> 32))::bigint::oid AND objid = \(Int64(lockKey & 0xFFFF_FFFF))::bigint::oid
               AND objsubid = 1
            """).first
        throw RebuildError.alreadyRunning(pid: try holder?.decode("pid", as: Int.self))
    }
}

/// What a rebuild did.
public struct RebuildSummary: Sendable, Hashable {
    /// Events applied by the bulk replay.
    public var replayed: Int
    /// The greatest position the bulk replay applied.
    public var lastPosition: Int64
    /// Seconds the bulk replay took (including building the indexes).
    public var replaySeconds: Double
    /// Events applied after the bulk replay: appended while it ran.
    public var caughtUp = 0
    /// Of those, the events applied under the swap's lock.
    public var underLock = 0
    /// How many times the swap tried to take its locks.
    public var swapAttempts = 0
    /// Seconds the whole rebuild took.
    public var seconds = 0.0

    /// Every event the new projections hold.
    public var events: Int { replayed + caughtUp }
}
