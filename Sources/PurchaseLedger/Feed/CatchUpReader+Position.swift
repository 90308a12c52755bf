import Postgres

extension CatchUpReader {
    /// A reader that continues just after the event at `position` (0: from the start), or nil
    /// when no event has that position.
    ///
    /// The feed is addressed by plain positions, which every event carries; the reader's place is
    /// the pair (transaction, position), and the event at `position` names its transaction. A
    /// position the feed handed out always exists: events are never deleted.
    package static func after(position: Int64, batchSize: Int, on connection: Connection) throws -> CatchUpReader? {
        if position == 0 { return CatchUpReader(after: .start, batchSize: batchSize) }
        let rows = try connection.query("SELECT tx::text AS tx_text FROM ledger.events WHERE position = \(position)")
        guard let row = rows.first else { return nil }
        return CatchUpReader(after: Checkpoint(transaction: try transaction(row), position: position), batchSize: batchSize)
    }
}
