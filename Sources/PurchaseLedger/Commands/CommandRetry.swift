import Logging
import Postgres

/// When a command (or a batch of them) may run again after an error: the one rule that
/// `ledger ingest` (``Ingestor``) and the library (``Ledger/execute(_:)``) share.
///
/// A deadlock, a serialization failure or a statement prepared before the schema changed
/// committed nothing: running it again is safe for any command. A lost connection may have
/// committed or not: only idempotent commands run again (a consume does not: its outcome would
/// become `alreadyConsumed`, and the caller could not tell whether it consumed).
enum CommandRetry {
    /// Attempts in all for one library call, the first one included (ingest has its own
    /// `maxRetries`).
    static let maxAttempts = 20

    /// After this many deadlocks in a row, `ledger ingest` runs a batch as two halves.
    static let deadlocksBeforeSplit = 3

    /// The error is the connection's, not the statement's: the connection is not used again.
    static func isLostConnection(_ error: PostgresError, on connection: Connection?) -> Bool {
        error.kind == .connection || error.kind == .connectionBroken
            || error.sqlState?.isConnectionClass == true || connection?.isBroken == true
    }

    /// Whether the commands may run again after `error`; `lost` is ``isLostConnection``'s answer.
    static func mayRetry(_ error: PostgresError, lost: Bool, idempotent: Bool) -> Bool {
        let transient = error.sqlState == .deadlockDetected || error.sqlState == .serializationFailure
            || error.isStalePreparedStatement
        return transient || (lost && idempotent)
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

    private static func reason(_ error: PostgresError) -> String {
        if error.sqlState == .deadlockDetected { return "a deadlock" }
        if error.sqlState == .serializationFailure { return "a serialization failure" }
        if error.isStalePreparedStatement { return "a schema change under a prepared statement" }
        return "a lost connection"
    }
}
