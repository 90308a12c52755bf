import Foundation
import Postgres

/// How the ledger runs its reports: on a share of the pool, under a statement timeout, and
/// stopped on the server when their caller goes away.
///
/// - **A share of the pool.** Reports hold at most ``connections(poolSize:)`` of the pool's
///   connections at once; the rest (a quarter, at least one) stay for commands and the short
///   queries, so a purchase never waits behind reports. A pool of one has nothing to keep.
/// - **A statement timeout** (`SET LOCAL statement_timeout`): a report that runs longer is
///   stopped by the server and throws ``ReportTimeoutError``.
/// - **Cancellation.** Cancelling the task that asked for a report cancels its statement on the
///   server (`PQcancel`): the call throws `CancellationError` and the connection goes back to
///   the pool.
package final class ReportRunner: Sendable {
    /// The connections reports may hold.
    package let share: PoolShare
    /// How long one report's statement may run; nil for no limit.
    package let timeout: Duration?

    package init(pool: ConnectionPool, poolSize: Int, timeout: Duration?) {
        share = PoolShare(of: pool, limit: Self.connections(poolSize: poolSize))
        self.timeout = timeout
    }

    /// Connections reports may hold of a pool of `poolSize`: all but a quarter of it (at least
    /// one kept), and at least one. 2 → 1, 4 → 3, 8 → 6, 16 → 12.
    package static func connections(poolSize: Int) -> Int {
        max(1, poolSize - max(1, poolSize / 4))
    }

    /// Runs a report's statements in one transaction, without JIT compilation (`jit = off`). The
    /// reports read a bounded window of the projections; at 10M events PostgreSQL compiled their
    /// plans for 0.1 to 0.4 s, more than the compiled code saved: 30 days of revenue took 1.43
    /// and 1.54 s with JIT and 1.33 and 1.13 s without, churn 1.24 and 1.23 s against 1.09 and
    /// 0.96 s (BENCHMARKS.md). The plans are the same either way.
    package func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let timeout = timeout
        return try await share.withConnection(cancellable: true) { connection in
            try connection.transaction { tx in
                if let timeout {
                    let milliseconds = String(max(1, Self.milliseconds(timeout)))
                    try tx.execute("SELECT set_config('jit', 'off', true), set_config('statement_timeout', \(milliseconds), true)")
                } else {
                    try tx.execute("SET LOCAL jit = off")
                }
                let start = ContinuousClock.now
                do {
                    return try body(tx)
                } catch let error as PostgresError where error.sqlState == .queryCanceled {
                    // The server's timeout, not a cancel request (which the pool turns into
                    // CancellationError): the statement ran for the whole timeout.
                    if let timeout, ContinuousClock.now - start >= timeout { throw ReportTimeoutError(timeout: timeout) }
                    throw error
                }
            }
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
