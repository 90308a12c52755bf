import Foundation

/// Why a rebuild, a verify or a chain check could not run. The live projections are unchanged
/// whenever one of these is thrown.
public enum RebuildError: Error, CustomStringConvertible, Equatable, Sendable {
    /// `--projection` named a set that does not exist.
    case unknownProjection(String)
    /// Another rebuild holds the rebuild lock of this database (`pid`: its server process).
    case alreadyRunning(pid: Int?)
    /// The swap could not take its locks within the allowed time: long transactions or queries
    /// hold the projection tables.
    case swapLocksUnavailable(seconds: Int, attempts: Int)
    /// A materialized view reads the projection tables: a swap cannot re-point it.
    case materializedViewDepends(String)
    /// The database has not been migrated: it lacks the rebuild functions.
    case notMigrated
    /// On a Citus cluster, transactions stayed committed on the coordinator and prepared on a
    /// worker for `seconds` (a worker down, or Citus's recovery off): a rebuild or a verify
    /// waits for them before it starts.
    case preparedInDoubt(count: Int, seconds: Int)

    public var description: String {
        switch self {
        case .unknownProjection(let name):
            let known = (ProjectionSet.allCases.map(\.rawValue) + ["all"]).joined(separator: ", ")
            return "unknown projection \"\(name)\": the projections are \(known)"
        case .alreadyRunning(let pid):
            let who = pid.map { " (server process \($0))" } ?? ""
            return "another ledger rebuild is running on this database\(who); wait for it to finish, or stop it and run this again"
        case .swapLocksUnavailable(let seconds, let attempts):
            return "could not lock the projection tables for the swap within \(seconds)s (\(attempts) attempts): "
                + "long transactions or queries hold them (see pg_locks); the live projections are unchanged, run ledger rebuild again"
        case .materializedViewDepends(let name):
            return "the materialized view \(name) reads the projection tables, and a rebuild cannot re-point it: "
                + "drop it, run ledger rebuild, and create it again"
        case .preparedInDoubt(let count, let seconds):
            return "\(count) transaction(s) stayed committed on the Citus coordinator and prepared on a worker for \(seconds)s: "
                + "bring every worker up and let Citus's recovery finish them (citus.recover_2pc_interval, or SELECT recover_prepared_transactions()), "
                + "then run it again; the live projections are unchanged"
        case .notMigrated:
            return "the database lacks the rebuild and verify functions (Schema/definitions/projections): run ledger migrate first"
        }
    }
}
