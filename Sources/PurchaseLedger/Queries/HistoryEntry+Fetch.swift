import Foundation
import Postgres

extension UserHistory {
    /// The user's latest `limit` history entries in time order (`ledger.user_history`, which owns
    /// which events are the user's and what each changed). One more is asked for, to know whether
    /// any were left out.
    package static func fetch(_ connection: Connection, userId: String, limit: Int) throws -> UserHistory {
        let rows = try connection.query("""
            SELECT event_position, occurred_at, recorded_at, stream, type, change, summary, store_code, payment_seq,
                   original_transaction_id, notification_id, job_id, job_kind, job_state, job_outcome
              FROM ledger.user_history(\(userId), \(limit + 1))
            """)
        var entries: [HistoryEntry] = []
        for row in rows {
            // One row per job an event caused: the rows of one event are adjacent.
            let position: Int64 = try row.decode("event_position")
            if entries.last?.position != position {
                entries.append(HistoryEntry(
                    position: position,
                    occurredAt: try row.decode("occurred_at"),
                    recordedAt: try row.decode("recorded_at"),
                    stream: try row.decode("stream"),
                    type: try row.decodeEnum("type"),
                    change: try row.decode("change"),
                    summary: try row.decode("summary"),
                    storeCode: try row.decode("store_code", as: String?.self).flatMap(StoreCode.init(rawValue:)),
                    paymentSeq: try row.decode("payment_seq"),
                    originalTransactionId: try row.decode("original_transaction_id"),
                    notificationId: try row.decode("notification_id"),
                    jobs: []))
            }
            if let id: Int64 = try row.decode("job_id") {
                entries[entries.count - 1].jobs.append(HistoryEntry.Job(
                    id: id, kind: try row.decode("job_kind"), state: try row.decode("job_state"),
                    outcome: try row.decode("job_outcome")))
            }
        }
        let truncated = entries.count > limit
        return UserHistory(entries: Array(entries.suffix(limit)), truncated: truncated)
    }
}
