import Logging
import Postgres

/// What happens to commands (a batch of them, or a job's finish) after an error: the one policy
/// of the write path, which the library (``Ledger/execute(_:)``), `ledger ingest` and `POST
/// /v1/batch` (``Ingestor``) and the store jobs' finish share.
///
/// A deadlock, a serialization failure, a statement prepared before the schema changed or a claim
/// of a key another user's command claimed first (``isLostClaim(_:)``) committed nothing: running
/// it again is safe for any command. A lost connection may have
/// committed or not: only idempotent commands run again (a consume does not: its outcome would
/// become `alreadyConsumed`, and the caller could not tell whether it consumed).
package enum CommandRetry {
    /// Attempts in all, the first one included (``Ingestor/maxRetries`` + 1 for an ingest).
    static let maxAttempts = 20

    /// Attempts in all while the connection is lost, the first one included, whatever
    /// `maxAttempts` says: their pauses (0.1 s, 0.2 s, … then 2 s each) add up to 59 s, which a
    /// restart of PostgreSQL, or of a Citus worker with its recovery on a loaded machine, fits in;
    /// `maxAttempts` of them add up to 19 s. `citus_check_worker_killed` keeps a worker down 25 s.
    static let maxAttemptsWhileLost = 40

    /// After this many deadlocks in a row, `ledger ingest` runs a batch as two halves.
    static let deadlocksBeforeSplit = 3

    /// What to do after attempt `attempt` (1 for the first) failed with `error`.
    enum Next: Equatable {
        /// Run the same commands again, after `pause` seconds.
        case retry(pause: Double)
        /// Run them again as two halves, each a transaction of its own, in order: the server's
        /// lock table was full (each command holds a few transaction locks until its batch
        /// commits), or the batch deadlocked again and again (a batch takes its keys in the one
        /// global order, so only locks no key foresaw, such as a payment named by an alias or the
        /// parked notifications a command releases, can deadlock; smaller batches hold fewer).
        case split
        /// Give up: the error is the commands' answer (the library then runs each command of a
        /// batch on its own, so that the error reaches only the command that causes it).
        case fail
    }

    /// The policy: a full lock table splits a batch; a deadlock, a serialization failure, a
    /// stale prepared statement or a lost claim runs it again at once, up to `maxAttempts`, and a lost connection
    /// after a pause (only when every command is idempotent), up to `maxAttemptsWhileLost`; three
    /// deadlocks in a row split it.
    static func next(after error: PostgresError, lost: Bool, attempt: Int, commands: Int, idempotent: Bool,
                     maxAttempts: Int = maxAttempts) -> Next {
        if error.sqlState == .outOfSharedMemory && commands > 1 { return .split }
        guard attempt < (lost ? max(maxAttempts, maxAttemptsWhileLost) : maxAttempts),
              mayRetry(error, lost: lost, idempotent: idempotent) else { return .fail }
        if error.sqlState == .deadlockDetected && attempt >= deadlocksBeforeSplit && commands > 1 { return .split }
        return .retry(pause: lost ? pause(afterLostConnection: attempt) : 0)
    }

    /// The error is the connection's, not the statement's: the connection is not used again.
    /// On Citus the connection may be the coordinator's to a worker: one it could not open comes
    /// back as class 08, one that broke under a statement as XX000 with libpq's own words (or
    /// "failure on connection marked as essential"), and one that broke under a COPY of rows to
    /// a shard (a projection's INSERT … SELECT through the coordinator travels so) as 58030 "failed
    /// to COPY to shard". Either way the outcome is unknown (the coordinator may have committed
    /// before it lost the worker, which Citus's recovery then completes), so only idempotent
    /// commands run again, as after a lost connection of our own.
    static func isLostConnection(_ error: PostgresError, on connection: Connection?) -> Bool {
        error.kind == .connection || error.kind == .connectionBroken
            || error.sqlState?.isConnectionClass == true || connection?.isBroken == true
            || (error.sqlState == .internalError && (error.message.contains("server closed the connection unexpectedly")
                                                     || error.message.hasPrefix("failure on connection marked as essential")))
            || (error.sqlState == .ioError && error.message.hasPrefix("failed to COPY to shard"))
    }

    /// Whether the commands may run again after `error`; `lost` is ``isLostConnection``'s answer.
    static func mayRetry(_ error: PostgresError, lost: Bool, idempotent: Bool) -> Bool {
        let transient = error.sqlState == .deadlockDetected || error.sqlState == .serializationFailure
            || error.isStalePreparedStatement || isLostClaim(error)
        return transient || (lost && idempotent)
    }

    /// The tables whose unique keys claim a key for one user across all users (the key
    /// registries, and the account links): the tables `ledger.distribution_plan()` distributes by
    /// their own key, but the keys' locks, whose rows no command claims (a test holds the two
    /// lists together).
    package static let registries: Set<String> = [
        "payment_keys", "transaction_keys", "lineage_keys", "token_keys", "notification_keys", "account_links",
    ]

    /// Whether the error is a key's claim lost to another command: a unique violation in a key
    /// registry. The commands' keys are locked first (`ledger.lock_keys`), so the command that
    /// waits for a key reads its registry after the other's claim committed and answers as the
    /// contract says (`USER_INVALID`, `PAYMENT_CONFLICT`, `duplicate`). On a Citus cluster whose
    /// commands run on the workers, the lock's row and the registry's row are on the nodes their
    /// keys hash to, and the other command's two-phase commit ends on each node in its own time:
    /// a command can take the lock on one node before the claim is visible on another, read the
    /// registry without it, and then wait for it on the unique key and fail there. Run again, it
    /// reads the claim. (On a cluster the table is a shard, its name the table's and `_` and the
    /// shard's id.)
    ///
    /// A violation on a node the command reached over Citus's connection (the command pushed down
    /// to one worker, the registry's shard on the other) comes back without its table, schema
    /// and constraint fields: Citus relays the worker's message and SQLSTATE only. Then the
    /// constraint is read from the message, and must be a registry's primary key
    /// (`transaction_keys_pkey_102572`; a registry has no other unique key), as in the races
    /// across shards of `scripts/dev citus check`, where such a violation takes the place of a
    /// refusal now and then; a server whose `lc_messages` is not English words the message
    /// otherwise, and such a violation stays an error.
    package static func isLostClaim(_ error: PostgresError) -> Bool {
        guard error.sqlState == .uniqueViolation, error.schema == "ledger" || error.schema == nil else { return false }
        if let table = error.table {
            return registries.contains(unsharded(table))
        }
        guard let constraint = error.constraint ?? quotedConstraint(in: error.message) else { return false }
        return registries.contains { unsharded(constraint) == $0 + "_pkey" }
    }

    /// A table's or a constraint's name without a shard's suffix (`_` and the shard's id).
    private static func unsharded(_ name: String) -> String {
        let shard = name.reversed().prefix(while: \.isNumber).count
        return shard > 0 ? String(name.dropLast(shard + 1)) : name
    }

    /// The constraint PostgreSQL names in a unique violation's message
    /// (`duplicate key value violates unique constraint "payment_keys_pkey"`).
    private static func quotedConstraint(in message: String) -> String? {
        let prefix = "duplicate key value violates unique constraint \""
        guard message.hasPrefix(prefix), message.hasSuffix("\"") else { return nil }
        let name = message.dropFirst(prefix.count).dropLast()
        return name.isEmpty || name.contains("\"") ? nil : String(name)
    }

    /// Seconds to wait before attempt `attempt + 1` after a lost connection (the server may be
    /// restarting); after a transient error the other transaction is gone: no wait.
    static func pause(afterLostConnection attempt: Int) -> Double {
        min(2, 0.1 * Double(attempt))
    }

    /// Tells the operator that the commands run again (never their values: an error's
    /// description holds no bound value). A lost connection is a warning: the server went away
    /// and the next attempt reconnects. A deadlock or a serialization failure is a notice.
    static func logRetry(_ logger: Logger, after error: PostgresError, lost: Bool, attempt: Int, commands: Int) {
        let metadata: Logger.Metadata = [
            "attempt": "\(attempt + 1)", "commands": "\(commands)", "error": "\(error)",
        ]
        if lost {
            logger.warning("the connection to PostgreSQL was lost: reconnecting to run the commands again", metadata: metadata)
        } else {
            logger.notice("running the commands again after \(reason(error))", metadata: metadata)
        }
    }

    /// Tells the operator that a batch runs as two smaller ones.
    static func logSplit(_ logger: Logger, after error: PostgresError, attempt: Int, commands: Int) {
        logger.notice("running the batch as two smaller ones after \(reason(error))",
                      metadata: ["commands": "\(commands)", "attempt": "\(attempt)", "error": "\(error)"])
    }

    private static func reason(_ error: PostgresError) -> String {
        if error.sqlState == .deadlockDetected { return "a deadlock" }
        if error.sqlState == .serializationFailure { return "a serialization failure" }
        if error.isStalePreparedStatement { return "a schema change under a prepared statement" }
        if isLostClaim(error) { return "a key claimed by another command first" }
        if error.sqlState == .outOfSharedMemory { return "the server's lock table filled up" }
        return "a lost connection"
    }
}
