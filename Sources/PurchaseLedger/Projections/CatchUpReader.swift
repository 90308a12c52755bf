import Foundation
import Postgres

/// Follows `ledger.events` in a global order without ever skipping an event that commits late.
///
/// Reading `WHERE position > last` loses events: a position is taken when the event is
/// inserted, but the event becomes visible when its transaction commits, so a reader can pass
/// position 11 (committed) while 10 is still in flight, and never see 10. This reader orders by
/// `(tx, position)` (the appending transaction's id, then the position) and only reads events
/// whose transaction is older than every transaction still running (`tx` below
/// `ledger.read_horizon()`, on one server `pg_snapshot_xmin(pg_current_snapshot())`): such events
/// are final, and every event that commits later has a greater `tx` than any it has returned.
/// Events of one transaction come together, in position order; transactions come in the order
/// they were given ids, which is not always commit order, so two transactions' events on one
/// stream may arrive out of version order. The price is latency: an event waits until every
/// transaction that was running when it was appended has ended, in any database of the server.
///
/// On a Citus coordinator the horizon also stays below every transaction that Citus has
/// committed there but may not have committed on a worker yet (its 2PC records): `tx` is the
/// coordinator's transaction id, and a statement on the distributed log would evaluate
/// `pg_current_snapshot()` on each worker, in that worker's ids. So a read is two statements: the
/// horizon, on the node the reader is connected to, then the events below it
/// (docs/scale-out.md, "Readers on a cluster").
public struct CatchUpReader: Sendable {
    /// A place in the order: the last event read. `.start` is before every event.
    public struct Checkpoint: Sendable, Hashable, Comparable {
        /// The appending transaction's id (`xid8`).
        public var transaction: UInt64
        /// The event's position.
        public var position: Int64

        public init(transaction: UInt64, position: Int64) {
            self.transaction = transaction
            self.position = position
        }

        /// Before every event.
        public static let start = Checkpoint(transaction: 0, position: 0)

        public static func < (a: Self, b: Self) -> Bool {
            (a.transaction, a.position) < (b.transaction, b.position)
        }
    }

    /// One event of the log.
    public struct Event: Sendable, Hashable {
        public var position: Int64
        public var transaction: UInt64
        public var stream: String
        public var version: Int
        /// The event's type as stored; ``eventType`` reads it as an ``EventType``.
        public var type: String
        /// The event's data, as JSON text (Schema/EVENTS.md).
        public var data: String
        public var occurredAt: Date
        public var recordedAt: Date
        /// The user it belongs to (`ledger.events.user_id`), or nil for a fact that has no user:
        /// a product declaration, a store notification parked, asked about an unknown payment or
        /// ignored.
        public var userId: String? = nil

        /// The type, or nil for one this build does not know (written by a newer ledger).
        public var eventType: EventType? { EventType(rawValue: type) }

        /// The checkpoint just after this event.
        public var checkpoint: Checkpoint { Checkpoint(transaction: transaction, position: position) }
    }

    /// The last event read; the next read continues after it. Store it to resume later.
    public private(set) var checkpoint: Checkpoint
    /// Events per read, at most.
    public var batchSize: Int

    public init(after checkpoint: Checkpoint = .start, batchSize: Int = 1000) {
        self.checkpoint = checkpoint
        self.batchSize = max(1, batchSize)
    }

    /// The next events after the checkpoint that are final, at most `batchSize` of them, and
    /// moves the checkpoint past them. Empty when there is nothing final to read yet. Two
    /// statements: the horizon (`ledger.read_horizon()`), then one index range scan of
    /// `events_tx_position_idx`.
    public mutating func next(on connection: Connection) throws -> [Event] {
        let horizon = try Self.horizon(on: connection)
        let rows = try connection.query(Self.query(after: checkpoint, below: horizon, limit: batchSize))
        let events = try rows.map { row in
            Event(position: try row.decode("position"), transaction: try Self.transaction(row),
                  stream: try row.decode("stream"), version: try row.decode("version"),
                  type: try row.decode("type"), data: try row.decode("data_text"),
                  occurredAt: try row.decode("occurred_at"), recordedAt: try row.decode("recorded_at"),
                  userId: try row.decode("user_id"))
        }
        if let last = events.last { checkpoint = last.checkpoint }
        return events
    }

    /// The transaction id below which every event is final now (`ledger.read_horizon()`), asked
    /// in a statement of its own so that a Citus coordinator computes it itself.
    package static func horizon(on connection: Connection) throws -> UInt64 {
        let text = try connection.query("SELECT ledger.read_horizon()::text AS h")[0].decode("h", as: String.self)
        guard let horizon = UInt64(text) else {
            throw PostgresError(kind: .decoding, message: "ledger.read_horizon(): \(text) is not an xid8")
        }
        return horizon
    }

    /// A row's `tx_text` column: the appending transaction's `xid8`, selected as text.
    static func transaction(_ row: Row) throws -> UInt64 {
        let text = try row.decode("tx_text", as: String.self)
        guard let transaction = UInt64(text) else {
            throw PostgresError(kind: .decoding, message: "column tx_text: \(text) is not an xid8")
        }
        return transaction
    }

    /// The checkpoint after the newest event that is final now (`.start` when there is none): a
    /// reader starting there reads only what commits from now on (a new webhook endpoint's
    /// start). One backward step of `events_tx_position_idx`, under the rule of ``query(after:below:limit:)``.
    package static func end(on connection: Connection) throws -> Checkpoint {
        let horizon = try horizon(on: connection)
        let rows = try connection.query("""
            SELECT e.tx::text AS tx_text, e.position
              FROM ledger.events e
             WHERE e.tx < \(String(horizon))::xid8
             ORDER BY e.tx DESC, e.position DESC
             LIMIT 1
            """)
        guard let row = rows.first else { return .start }
        return Checkpoint(transaction: try transaction(row), position: try row.decode("position"))
    }

    /// The statement `next(on:)` runs: the events after `checkpoint` and below `horizon` in
    /// `(tx, position)` order, at most `limit` of them (tests EXPLAIN it).
    ///
    /// It orders by the `xid8` column itself. A bare name in ORDER BY means an output column
    /// first, so with `tx::text AS tx` in the select list `ORDER BY tx` would sort by the id's
    /// text ("10000000" before "9999993") while the WHERE clause and the checkpoint compare
    /// xid8s, and a read that straddles a power of ten would move the checkpoint past events it
    /// never returned. The columns read as text therefore have names of their own, and ORDER BY
    /// names the table's columns.
    package static func query(after checkpoint: Checkpoint, below horizon: UInt64, limit: Int) -> SQL {
        """
        SELECT e.tx::text AS tx_text, e.position, e.stream, e.version, e.type, e.data::text AS data_text,
               e.occurred_at, e.recorded_at, nullif(e.user_id, '') AS user_id
          FROM ledger.events e
         WHERE (e.tx, e.position) > (\(String(checkpoint.transaction))::xid8, \(checkpoint.position)::bigint)
           AND e.tx < \(String(horizon))::xid8
         ORDER BY e.tx, e.position
         LIMIT \(limit)
        """
    }
}
