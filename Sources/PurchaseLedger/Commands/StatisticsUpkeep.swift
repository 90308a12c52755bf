import Logging
import Postgres
import Synchronization

/// When the command paths ask the database to bring a young ledger's planner statistics up to
/// date (`ledger.refresh_statistics`, which analyses the ledger's tables only when the log has
/// passed 1,000 events and doubled since they were last analysed): once every ``every``
/// commands committed, after their commit, on the connection that committed them.
///
/// A session's generic plans are made once; made while a new ledger's tables were empty they
/// would stay until autovacuum's first `ANALYZE`, a minute or more later, and slow the ledger
/// down as it grows (BENCHMARKS.md, "the slow start"). Both `ledger ingest` and the library
/// count their commands with this one type, so a new ledger keeps its rate from its first
/// thousand commands on, whichever path writes it.
package final class StatisticsUpkeep: Sendable {
    /// Commands committed between two checks. A check is a round trip and two catalog reads.
    package static let every = 1_000

    private let committed = Mutex(0)

    package init() {}

    /// Counts `count` committed commands and, when the count passed a multiple of ``every``,
    /// runs the check on `connection`. The commands are committed already: a failed check is
    /// logged (at debug level: it only delays the refresh to the next check) and not thrown.
    package func committed(_ count: Int, on connection: Connection, logger: Logger) {
        let due = committed.withLock { total in
            let before = total / Self.every
            total += count
            return total / Self.every > before
        }
        guard due else { return }
        do {
            let rows = try connection.query("SELECT ledger.refresh_statistics() AS analysed")
            if try rows.first?.decode("analysed", as: Bool.self) == true {
                logger.debug("analysed the ledger's tables: the planner's statistics were older than half the log")
            }
        } catch {
            logger.debug("the statistics check failed; the next one runs after \(Self.every) commands",
                         metadata: ["error": "\(error)"])
        }
    }
}
