import Foundation
import Logging
import Postgres
import Synchronization

/// Where the ledger's queries read (README, "Reads from replicas"): PostgreSQL streaming
/// replicas of the primary, each with a pool of its own, taken in turn, and the primary when
/// none is configured, none can be reached, or none has caught up.
///
/// **Reading one's own writes.** The ledger keeps the highest WAL position (LSN) at which one of
/// its commands committed, read on the primary after each commit. A query is answered by a
/// replica only once the replica has replayed that far (`pg_last_wal_replay_lsn()`, looked at every millisecond), for at most
/// ``maxWait``; then by the primary. A replica that cannot be reached costs a fall-back to the
/// primary, logged, never an error.
package final class ReadReplicas: Sendable {
    /// How long a query waits for a replica to replay the ledger's own writes before the primary
    /// answers it.
    package static let maxWait: Duration = .milliseconds(500)

    package let pools: [ConnectionPool]
    private let turn = Atomic<Int>(0)
    /// The highest commit LSN of this ledger's commands.
    private let written = Atomic<UInt64>(0)
    private let logger: Logger
    /// Queries answered by a replica, and by the primary instead of a replica (`/metrics`).
    package let counts = Mutex<(replica: Int, primary: Int)>((0, 0))

    package init(urls: [String], poolSize: Int, logger: Logger) {
        pools = urls.map { ConnectionPool(configuration: ConnectionConfiguration($0), size: poolSize) }
        self.logger = logger
    }

    /// The replica URLs `LEDGER_READ_DATABASE_URL` names: one or more, separated by `;`.
    package static func urls(fromEnvironment environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        (environment["LEDGER_READ_DATABASE_URL"] ?? "").split(separator: ";")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    package var isEmpty: Bool { pools.isEmpty }

    /// Notes that a command committed on `connection` (the primary's): reads the WAL position
    /// its commit was flushed to. One short round trip per committed batch, only with replicas.
    package func committed(on connection: Connection) {
        guard !pools.isEmpty else { return }
        guard let text = try? connection.query("SELECT pg_current_wal_flush_lsn()::text").first?.decode(0, as: String.self),
              let lsn = Self.lsn(text) else { return }
        written.max(lsn)
    }

    /// Runs `body` on a replica that has replayed this ledger's own commits, else on `primary`.
    package func withConnection<T: Sendable>(primary: ConnectionPool,
                                             _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        guard !pools.isEmpty else { return try await primary.withConnection(body) }
        let pool = pools[turn.wrappingAdd(1, ordering: .relaxed).oldValue % pools.count]
        let target = written.load(ordering: .acquiring)
        let deadline = ContinuousClock.now + Self.maxWait
        let answer: T?
        do {
            answer = try await pool.withConnection { connection -> T? in
                if target > 0 {
                    while true {
                        // A primary given as a replica has no replay position: it has everything.
                        guard let replayed = try connection.query("SELECT pg_last_wal_replay_lsn()::text").first?
                            .decode(0, as: String?.self).flatMap(Self.lsn), replayed < target else { break }
                        guard ContinuousClock.now < deadline else { return nil }
                        usleep(1000)
                    }
                }
                return try body(connection)
            }
        } catch let error as PostgresError where error.kind == .connection || error.kind == .connectionBroken {
            logger.warning("a read replica cannot be reached; the primary answers", metadata: ["error": "\(error)"])
            answer = nil
        } catch let error as PostgresError where error.sqlState?.rawValue == "40001" {
            // A replica cancels a query whose rows its replay must remove ("conflict with recovery").
            logger.notice("a read replica cancelled a query in conflict with its replay; the primary answers")
            answer = nil
        }
        if let answer {
            counts.withLock { $0.replica += 1 }
            return answer
        }
        counts.withLock { $0.primary += 1 }
        return try await primary.withConnection(body)
    }

    package func close() async {
        for pool in pools { await pool.close() }
    }

    /// An LSN as PostgreSQL prints it (`16/B374D848`) as a number.
    package static func lsn(_ text: String) -> UInt64? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16) else { return nil }
        return high << 32 | low
    }
}

private extension Atomic<UInt64> {
    /// Raises the value to `value` when it is higher.
    func max(_ value: UInt64) {
        var current = load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = compareExchange(expected: current, desired: value, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }
}
