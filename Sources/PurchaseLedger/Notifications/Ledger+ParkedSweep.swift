import Foundation
import Logging
import Postgres

extension Ledger {
    /// Releases every parked store notification whose owner the ledger knows now (appended at or
    /// after `since`, or at any time when nil), as the command that made the owner known releases
    /// what it finds parked (`ledger.release_owned_parked`, one notification a transaction, under
    /// its keys' locks). Returns how many notifications were released.
    ///
    /// A command recording a payment releases the notifications parked about it, under the keys'
    /// locks it shares with them. On a Citus cluster whose commands run on the workers those locks
    /// are rows on the keys' nodes, and a 2PC commits on each node in its own time: a payment's
    /// line can miss a notification whose park is committed on the key's node and not yet on the
    /// node of the parked facts. Nothing is lost (both are in the log), but the notification
    /// waits for this sweep, which `ledger serve` runs every minute and `ledger reconcile parked`
    /// runs on demand. On one server no command leaves such a notification, and the sweep finds
    /// none.
    public func releaseOwnedParked(since: Date? = nil) async throws -> Int {
        var after = Int64.min
        var released = 0
        while let (position, count) = try await releaseFirstOwnedParked(after: after, since: since) {
            after = position
            released += count
        }
        return released
    }

    /// Runs ``releaseOwnedParked(since:)`` every `interval` until the task is cancelled: the first
    /// sweep over every parked notification, each later one over those appended since the
    /// previous one began, less `overlap` (a notification appended in a transaction that
    /// committed later). A failure is logged and the next sweep reaches back to the last one that
    /// ended.
    public func releaseOwnedParkedForever(interval: Duration = .seconds(60), overlap: TimeInterval = 600) async {
        var since: Date?
        while !Task.isCancelled {
            let started = Date()
            do {
                let released = try await releaseOwnedParked(since: since)
                if released > 0 {
                    logger.notice("released \(released) parked store notification(s) whose owner was recorded meanwhile")
                }
                since = started.addingTimeInterval(-overlap)
            } catch is CancellationError {
                return
            } catch {
                logger.warning("the sweep of parked notifications failed: \(error)")
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// One step of the sweep, in a transaction of its own, under the write path's retry policy
    /// (it is idempotent: run again, it finds what is still parked).
    private func releaseFirstOwnedParked(after: Int64, since: Date?) async throws -> (Int64, Int)? {
        try await retryingOneCommand(idempotent: true) { connection in
            let row = try connection.query("""
                SELECT notification_position, released
                  FROM ledger.release_owned_parked(\(after), \(since)::timestamptz)
                """)[0]
            guard let position = try row.decode("notification_position", as: Int64?.self) else { return nil }
            return (position, Int(try row.decode("released", as: Int32.self)))
        }
    }
}
