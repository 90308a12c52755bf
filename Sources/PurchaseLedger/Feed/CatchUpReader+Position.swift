import Postgres

extension CatchUpReader {
    /// A reader that continues after `cursor`: just after each of its events, in that event's
    /// node group's order. Throws ``LedgerError`` `INVALID_INPUT` naming `after` for a position no
    /// event has.
    ///
    /// The feed is addressed by plain positions, which every event carries; the reader's place in
    /// a group is the pair (transaction, position), and the event at a position names its
    /// transaction. A position the feed handed out always exists: events are never deleted.
    package static func after(_ cursor: EventCursor, batchSize: Int, on connection: Connection) throws -> CatchUpReader {
        guard !cursor.positions.isEmpty else { return CatchUpReader(batchSize: batchSize) }
        let rows = try connection.query("""
            SELECT tx::text AS tx_text, position FROM ledger.events
             WHERE position = ANY(\(PostgresArray(elements: cursor.positions.map { .text(String($0)) }))::bigint[])
            """)
        var found: [Int64: Checkpoint] = [:]
        for row in rows {
            let position: Int64 = try row.decode("position")
            found[position] = Checkpoint(transaction: try transaction(row), position: position)
        }
        if let missing = cursor.positions.first(where: { found[$0] == nil }) {
            throw LedgerError.invalid("after", "no event has position \(missing)")
        }
        return CatchUpReader(after: cursor.positions.map { found[$0]! }, batchSize: batchSize)
    }

    /// The feed's cursor at this reader's place.
    public var cursor: EventCursor {
        EventCursor(positions: checkpoints.map(\.position))
    }
}
