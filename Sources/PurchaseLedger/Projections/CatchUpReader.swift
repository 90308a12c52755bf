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
/// On a Citus cluster each node's horizon is computed on that node: `tx` is an id of the node
/// that holds the event, and a statement on the distributed log would evaluate
/// `pg_current_snapshot()` on each worker, in that worker's ids. A transaction that Citus
/// committed on the node that ran it and not yet on the event's node is still prepared there, and
/// holds that node's horizon below its id; the horizon also stays below the transactions a node
/// committed but may not have committed on another yet (its 2PC records), which kept the events a
/// log distributed by an earlier release appended with the id of the node that ran them. So a
/// read is two kinds of statement: the horizons, computed on each node
/// (`ledger.read_horizons()`), then the events below them.
///
/// Two nodes' transaction ids are unrelated, so the order is one per *node group*: the group
/// of the node that holds the event, `position >> 48` (Citus gives group g the log's positions
/// from g × 2^48 + 1; the coordinator and one server are group 0). On a distributed log an event
/// takes the transaction id and a position of its owner's worker, whichever node ran the command
/// (`ledger.event_on_owner_node`), so a user's events are in one group's order until the
/// rebalancer moves the user's shards. The reader keeps a checkpoint per group and reads each
/// group below that group's horizon; a read takes the groups in turn, so that a busy one does
/// not starve the others. Within a group the order above holds; across groups there is none
/// (docs/scale-out.md, "Readers on a cluster").
public struct CatchUpReader: Sendable {
    /// A place in one node group's order: the last event of the group read. `.start` is before
    /// every event of group 0 (one server's only group).
    public struct Checkpoint: Sendable, Hashable, Comparable {
        /// The appending transaction's id (`xid8`).
        public var transaction: UInt64
        /// The event's position.
        public var position: Int64

        public init(transaction: UInt64, position: Int64) {
            self.transaction = transaction
            self.position = position
        }

        /// Before every event of group 0.
        public static let start = Checkpoint(transaction: 0, position: 0)

        /// Before every event of node group `group`: the first position of its range, which no
        /// event has (the group's first is one more).
        public static func start(group: Int) -> Checkpoint {
            Checkpoint(transaction: 0, position: Int64(group) << CatchUpReader.groupShift)
        }

        /// The node group whose transaction appended the event (`position >> 48`).
        public var group: Int { Int(position >> CatchUpReader.groupShift) }

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

        public init(position: Int64, transaction: UInt64, stream: String, version: Int, type: String, data: String,
                    occurredAt: Date, recordedAt: Date, userId: String? = nil) {
            self.position = position
            self.transaction = transaction
            self.stream = stream
            self.version = version
            self.type = type
            self.data = data
            self.occurredAt = occurredAt
            self.recordedAt = recordedAt
            self.userId = userId
        }

        /// The type, or nil for one this build does not know (written by a newer ledger).
        public var eventType: EventType? { EventType(rawValue: type) }

        /// The checkpoint just after this event.
        public var checkpoint: Checkpoint { Checkpoint(transaction: transaction, position: position) }
    }

    /// A position's high bits name the node group that appended it: Citus's ranges of an
    /// identity per node are 2^48 wide.
    public static let groupShift: Int64 = 48

    /// The last event read in each node group's order, one per group, in group order; a group
    /// with none is at its start. Store them to resume later.
    public private(set) var checkpoints: [Checkpoint]
    /// Events per read, at most.
    public var batchSize: Int
    /// The group the next read takes first.
    private var turn = 0

    /// A reader after `checkpoints`, at most one per node group (a later one of a group wins).
    public init(after checkpoints: [Checkpoint] = [], batchSize: Int = 1000) {
        var byGroup: [Int: Checkpoint] = [:]
        for checkpoint in checkpoints where checkpoint != .start(group: checkpoint.group) { byGroup[checkpoint.group] = checkpoint }
        self.checkpoints = byGroup.keys.sorted().map { byGroup[$0]! }
        self.batchSize = max(1, batchSize)
    }

    /// A reader after one checkpoint: its group's; the other groups from their start.
    public init(after checkpoint: Checkpoint, batchSize: Int = 1000) {
        self.init(after: [checkpoint], batchSize: batchSize)
    }

    /// The last event read in node group `group`'s order, or the group's start.
    public func checkpoint(group: Int) -> Checkpoint {
        checkpoints.first { $0.group == group } ?? .start(group: group)
    }

    /// Moves the reader past `event` in its group's order.
    private mutating func move(past event: Event) {
        let checkpoint = event.checkpoint
        if let index = checkpoints.firstIndex(where: { $0.group == checkpoint.group }) {
            checkpoints[index] = checkpoint
        } else {
            checkpoints.append(checkpoint)
            checkpoints.sort { $0.group < $1.group }
        }
    }

    /// The next events after the checkpoints that are final, at most `batchSize` of them, and
    /// moves the checkpoints past them. Empty when there is nothing final to read yet. The
    /// horizons (`ledger.read_horizons()`), then per node group with events to read one index
    /// range scan of `events_tx_position_idx`, the groups taken in turn from one read to the next;
    /// on one server, one group: two statements.
    public mutating func next(on connection: Connection) throws -> [Event] {
        try next(on: connection, below: try Self.horizons(on: connection))
    }

    /// ``next(on:)`` below horizons asked before (``horizons(on:)``), such as before the
    /// transaction the caller reads in: a worker's horizon is asked cheaply only outside a
    /// transaction block, and an older horizon only holds the reader back.
    package mutating func next(on connection: Connection, below horizons: [(group: Int, horizon: UInt64)]) throws -> [Event] {
        guard !horizons.isEmpty else { return [] }
        let first = turn % horizons.count
        turn = first + 1
        var events: [Event] = []
        for (group, horizon) in horizons[first...] + horizons[..<first] where events.count < batchSize {
            let rows = try connection.query(Self.query(after: checkpoint(group: group), below: horizon,
                                                       limit: batchSize - events.count))
            let read = try rows.map { row in
                Event(position: try row.decode("position"), transaction: try Self.transaction(row),
                      stream: try row.decode("stream"), version: try row.decode("version"),
                      type: try row.decode("type"), data: try row.decode("data_text"),
                      occurredAt: try row.decode("occurred_at"), recordedAt: try row.decode("recorded_at"),
                      userId: try row.decode("user_id"))
            }
            if let last = read.last { move(past: last) }
            events += read
        }
        return events
    }

    /// The transaction id below which every event of each node group is final now
    /// (`ledger.read_horizons()`), in group order, each node's computed on that node and asked in
    /// a statement of its own. On one server, and on a cluster while the appends refuse a worker's
    /// position, one statement. Otherwise each worker's next, by `ledger.node_read_horizon(route)`, which
    /// Citus runs on the worker holding the route's shard over its cached connection when the
    /// call is outside a transaction block; a group that call does not answer (in a transaction
    /// block, or with no route) is asked through `ledger.worker_read_horizons`, a new connection to
    /// each worker. A worker that does not answer is left out.
    package static func horizons(on connection: Connection) throws -> [(group: Int, horizon: UInt64)] {
        var found: [(group: Int, horizon: UInt64)] = []
        var routes: [(group: Int, route: String?)] = []
        for row in try connection.query("SELECT node_group, horizon::text AS h, route FROM ledger.read_horizons()") {
            let group = try row.decode("node_group", as: Int.self)
            if let text = try row.decode("h", as: String?.self) {
                found.append((group, try xid8(text, from: "ledger.read_horizons()")))
            } else {
                routes.append((group, try row.decode("route", as: String?.self)))
            }
        }
        guard !routes.isEmpty else { return found }
        var unanswered: [Int] = []
        for (group, route) in routes {
            guard let route, !connection.isInTransaction else {
                unanswered.append(group)
                continue
            }
            let row = try connection.query("SELECT node_group, horizon::text AS h FROM ledger.node_read_horizon(\(route))")[0]
            if try row.decode("node_group", as: Int.self) == group {
                found.append((group, try xid8(try row.decode("h"), from: "ledger.node_read_horizon(\(route))")))
            } else {
                unanswered.append(group)
            }
        }
        if !unanswered.isEmpty {
            let groups = PostgresArray(elements: unanswered.map { .text(String($0)) })
            for row in try connection.query("""
                SELECT node_group, horizon::text AS h FROM ledger.worker_read_horizons(\(groups)::integer[])
                """) {
                found.append((try row.decode("node_group"), try xid8(try row.decode("h"), from: "ledger.worker_read_horizons")))
            }
        }
        return found.sorted { $0.group < $1.group }
    }

    private static func xid8(_ text: String, from source: String) throws -> UInt64 {
        guard let value = UInt64(text) else {
            throw PostgresError(kind: .decoding, message: "\(source): \(text) is not an xid8")
        }
        return value
    }

    /// Group 0's horizon: the only one on one server and on a cluster written through its
    /// coordinator.
    package static func horizon(on connection: Connection) throws -> UInt64 {
        guard let horizon = try horizons(on: connection).first(where: { $0.group == 0 })?.horizon else {
            throw PostgresError(kind: .decoding, message: "ledger.read_horizons(): no horizon for node group 0")
        }
        return horizon
    }

    /// A row's `tx_text` column: the appending transaction's `xid8`, selected as text.
    static func transaction(_ row: Row) throws -> UInt64 {
        try xid8(try row.decode("tx_text"), from: "column tx_text")
    }

    /// The checkpoints after the newest event of each node group that is final now (none for a
    /// group without one): a reader starting there reads only what commits from now on (a new
    /// webhook endpoint's start). One backward step of `events_tx_position_idx` per group, under
    /// the rule of ``query(after:below:limit:)``.
    package static func end(on connection: Connection) throws -> [Checkpoint] {
        try horizons(on: connection).compactMap { group, horizon in
            let rows = try connection.query("""
                SELECT e.tx::text AS tx_text, e.position
                  FROM ledger.events e
                 WHERE e.tx < \(String(horizon))::xid8
                   AND \(positions(ofGroup: group))
                 ORDER BY e.tx DESC, e.position DESC
                 LIMIT 1
                """)
            guard let row = rows.first else { return nil }
            return Checkpoint(transaction: try transaction(row), position: try row.decode("position"))
        }
    }

    /// The condition on `e.position` that keeps node group `group`'s events. Group 0's has an
    /// upper bound alone: on one server it holds every event, and a lower bound as well let the
    /// planner weigh the position index and a sort against the (tx, position) scan, which it took
    /// for small limits (the EXPLAIN test failed with both).
    static func positions(ofGroup group: Int) -> SQL {
        let start = Checkpoint.start(group: group).position
        return group == 0 ? "e.position < \(Int64(1) << groupShift)::bigint"
            : "e.position >= \(start)::bigint AND e.position < \(start + (1 << groupShift))::bigint"
    }

    /// The statement `next(on:)` runs for one node group: the group's events after `checkpoint`
    /// and below `horizon` in `(tx, position)` order, at most `limit` of them (tests EXPLAIN it).
    /// The group is the checkpoint's, kept by its range of positions (``positions(ofGroup:)``).
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
           AND \(positions(ofGroup: checkpoint.group))
         ORDER BY e.tx, e.position
         LIMIT \(limit)
        """
    }
}
