import Postgres

/// Checks the log's hash chains (`ledger verify --chain`): recomputes every event's hash in
/// SQL, checks that each stream's versions run 1…n and that each event links to the one
/// before, and that `ledger.streams` names each stream's last event (`ledger.chain_breaks`,
/// Schema/definitions/log/chain_breaks.sql). It catches events altered or removed behind the append-only triggers' back,
/// for example by a superuser who disabled them.
public struct ChainVerifier {
    /// At most this many breaks are returned (the first ones by position).
    public var limit: Int
    let connection: Connection

    public init(connection: Connection, limit: Int = 1000) {
        self.connection = connection
        self.limit = max(1, limit)
    }

    /// Checks every stream, in one snapshot.
    public func verify() throws -> ChainReport {
        guard try connection.query("SELECT to_regprocedure('ledger.chain_breaks()') IS NOT NULL AS ok")[0]
            .decode("ok", as: Bool.self) else { throw RebuildError.notMigrated }
        return try connection.repeatableRead { c in
            // Compiling the check's expressions takes longer than running them: on a log of 195,285
            // events, 2.45 s with JIT and 1.24 s without (BENCHMARKS.md, "The ledger distributed
            // by `ledger migrate`").
            try c.execute("SELECT set_config('jit', 'off', true)")
            let counts = try c.query("""
                SELECT (SELECT count(*) FROM ledger.events)::bigint AS events,
                       (SELECT count(*) FROM ledger.streams)::bigint AS streams
                """)[0]
            let breaks = try c.query("SELECT position, stream, version, problem, detail FROM ledger.chain_breaks() LIMIT \(limit)")
                .map { row in
                    ChainBreak(position: try row.decode("position"), stream: try row.decode("stream"),
                               version: try row.decode("version"),
                               problem: ChainBreak.Problem(rawValue: try row.decode("problem")) ?? .altered,
                               detail: try row.decode("detail"))
                }
            return ChainReport(events: try counts.decode("events"), streams: try counts.decode("streams"), breaks: breaks)
        }
    }
}

/// The result of a chain check.
public struct ChainReport: Sendable, Hashable {
    /// Events checked.
    public var events: Int
    /// Streams checked.
    public var streams: Int
    /// Where the chains break, first position first (empty when they hold).
    public var breaks: [ChainBreak]

    /// True when every chain holds.
    public var isIntact: Bool { breaks.isEmpty }
}

/// One place where a hash chain does not hold.
public struct ChainBreak: Sendable, Hashable {
    /// What went wrong there.
    public enum Problem: String, Sendable, Hashable {
        /// The event's content or hash was changed: its hash is not the hash of its content.
        case altered
        /// The event was changed and its hash recomputed: the next event's link, or the
        /// stream's head, no longer matches it.
        case rehashed
        /// Events are missing before this one, after it (the stream's head is further on), or
        /// all of them (no position).
        case removed
        /// Events that `ledger.append` did not write.
        case unrecorded
        /// The stream's name has heads under more than one owner (one break per head): events
        /// were appended under another owner than the one the key registries name.
        case forked
    }

    /// The event's position; nil when a stream lost every event.
    public var position: Int64?
    /// The stream, such as `payment:P-1`.
    public var stream: String
    /// The event's version in its stream.
    public var version: Int?
    public var problem: Problem
    /// A sentence for a person.
    public var detail: String

    public init(position: Int64?, stream: String, version: Int?, problem: Problem, detail: String) {
        self.position = position
        self.stream = stream
        self.version = version
        self.problem = problem
        self.detail = detail
    }
}
