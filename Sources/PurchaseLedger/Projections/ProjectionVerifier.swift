import Foundation
import Logging
import Postgres

/// Proves the projections true: replays the log into shadow tables (the same definitions as a
/// rebuild) and compares them row by row with the live tables, in one REPEATABLE READ
/// transaction, so that both sides reflect exactly the same events while appends go on (it
/// holds ACCESS SHARE locks on the live tables meanwhile, so a rebuild's swap waits). Nothing
/// is swapped; the shadow tables (`ledger_verify_<pid>`) vanish with the transaction, which is
/// rolled back: on a distributed ledger they are distributed tables, which Citus drops in no
/// transaction that has written them in parallel. On a Citus cluster the transaction starts as a
/// rebuild's does (`ClusterSnapshot`): its snapshots on the coordinator and on every worker are
/// taken under the writers' gate, when no transaction is in doubt on a worker.
public struct ProjectionVerifier {
    /// The projection sets to compare.
    public var projections: [ProjectionSet]
    /// Events per replay statement.
    public var batchSize: Int
    /// At most this many differing rows are described per table (all are counted).
    public var maxRowsPerTable: Int
    /// On a Citus cluster, how long to wait for transactions committed on the coordinator and
    /// still prepared on a worker before giving up (`RebuildError.preparedInDoubt`).
    public var inDoubtDeadline: TimeInterval = 60
    /// Where that wait is logged (silent by default).
    public var logger: Logger = .silent
    let connection: Connection

    public init(connection: Connection, projections: [ProjectionSet] = ProjectionSet.allCases,
                batchSize: Int = 250_000, maxRowsPerTable: Int = 100) {
        self.connection = connection
        self.projections = projections
        self.batchSize = max(1, batchSize)
        self.maxRowsPerTable = max(1, maxRowsPerTable)
    }

    /// Replays and compares. `progress` is called after each batch and at each phase.
    public func verify(progress: (ReplayProgress) -> Void = { _ in }) throws -> VerifyReport {
        try connection.execute("SELECT set_config('application_name', 'ledger verify', false)")
        try connection.executeScript(unsafeSQL: "SET client_min_messages = warning")
        let pid = try connection.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int.self)
        let shadow = "ledger_verify_\(pid)"
        let live: [SQL] = projections.flatMap { set in set.tables.map { "\(identifier: set.liveSchema).\(identifier: $0.name)" } }
        guard try connection.query("SELECT to_regprocedure('ledger.project_unseen(text, text)') IS NOT NULL AS ok")[0]
            .decode("ok", as: Bool.self) else { throw RebuildError.notMigrated }
        let snapshot = ClusterSnapshot(connection: connection, task: "verify", patience: inDoubtDeadline, logger: logger)
        // Before the snapshot: hold off a rebuild's swap, which would show this snapshot new tables
        // whose rows it cannot see.
        let holdOffSwaps = { (c: Connection) throws -> Void in
            try c.execute("LOCK TABLE \(live.joined(separator: ", ")) IN ACCESS SHARE MODE")
        }
        return try snapshot.repeatableRead(distributed: try ClusterSnapshot.isDistributed(connection), rolledBack: true,
                                           beforeSnapshot: holdOffSwaps) { c in
            // Left by this same server process if an earlier verify on it failed half-way.
            try c.execute("DROP SCHEMA IF EXISTS \(identifier: shadow) CASCADE")
            let replay = ShadowReplay(schema: shadow, batchSize: batchSize)
            let outcome = try replay.run(on: c, deferIndexes: true, keysKept: projections.keysUsedByReplay, rebuildIndexes: false,
                                         unlogged: true, progress: progress)
            progress(ReplayProgress(phase: .comparing, eventsDone: outcome.events, eventsTotal: outcome.events))
            var report = VerifyReport(events: outcome.events, lastPosition: outcome.lastPosition)
            let distributed = try distributionColumns(c)
            for set in projections {
                for table in set.tables {
                    // On a distributed ledger rows are matched by their distribution column too,
                    // the join Citus runs shard by shard: a row handed to another owner then shows
                    // as one row missing and one extra, where one server shows a changed user_id.
                    let column = distributed["\(set.liveSchema).\(table.name)"]
                    let key = table.key + (column.map { table.key.contains($0) ? [] : [$0] } ?? [])
                    let (count, differences) = try compare(c, table, key: key, live: set.liveSchema, shadow: shadow)
                    report.differingRows[table.name] = count
                    report.differences += differences
                }
            }
            return report
        }
    }

    /// The distribution column of each table distributed on a Citus cluster (`schema.table`);
    /// empty on plain PostgreSQL and for reference tables.
    private func distributionColumns(_ c: Connection) throws -> [String: String] {
        guard try c.query("SELECT to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL AS citus")[0]
            .decode("citus", as: Bool.self) else { return [:] }
        return try Dictionary(uniqueKeysWithValues: c.query("""
            SELECT n.nspname || '.' || c.relname AS relation, column_to_column_name(d.logicalrelid, d.partkey) AS column_name
              FROM pg_dist_partition d
              JOIN pg_class c ON c.oid = d.logicalrelid
              JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE d.partmethod = 'h'
            """).map { (try $0.decode("relation", as: String.self), try $0.decode("column_name", as: String.self)) })
    }

    /// The number of rows that differ between the live and the replayed table, matched by `key`,
    /// and the differences of the first `maxRowsPerTable` of them, one per differing column.
    private func compare(_ c: Connection, _ table: ProjectionTable, key: [String], live: String, shadow: String) throws
        -> (Int, [ProjectionDifference]) {
        let join = key.map { column -> SQL in "s.\(identifier: column) = l.\(identifier: column)" }
            .joined(separator: " AND ")
        let keys = key.enumerated().map { index, column -> SQL in
            "coalesce(l.\(identifier: column), s.\(identifier: column)) AS \(identifier: "k\(index)")"
        }.joined(separator: ", ")
        let keyText = key.indices.map { index -> SQL in
            "\(identifier: "k\(index)")::text AS \(identifier: "key\(index)")"
        }.joined(separator: ", ")
        let order = key.indices.map { index -> SQL in "\(identifier: "k\(index)")" }.joined(separator: ", ")
        // Rows compare column by column, and numeric columns also by their text: 0.990 equals
        // 0.99 as a number, but it is not the price as recorded.
        let numeric = try c.query("""
            SELECT attname FROM pg_attribute
             WHERE attrelid = to_regclass(format('%I.%I', \(live)::text, \(table.name)::text))
               AND atttypid = 'numeric'::regtype AND attnum > 0 AND NOT attisdropped
             ORDER BY attnum
            """).map { try $0.decode(0, as: String.self) }
        let differs = (["l IS DISTINCT FROM s"] + numeric.map { column -> SQL in
            "l.\(identifier: column)::text IS DISTINCT FROM s.\(identifier: column)::text"
        }).joined(separator: " OR ")
        let rows = try c.query("""
            WITH differing AS (
                SELECT \(keys), to_jsonb(l) AS live, to_jsonb(s) AS replayed
                  FROM \(identifier: live).\(identifier: table.name) l
                  FULL JOIN \(identifier: shadow).\(identifier: table.name) s ON \(join)
                 WHERE \(differs)
            ), shown AS (
                SELECT * FROM differing ORDER BY \(order) LIMIT \(maxRowsPerTable)
            )
            SELECT (SELECT count(*) FROM differing)::bigint AS differing, \(keyText),
                   coalesce(live, replayed)->>'user_id' AS user_id,
                   CASE WHEN live IS NULL THEN 'missing' WHEN replayed IS NULL THEN 'extra' ELSE 'changed' END AS kind,
                   col.key AS column_name, live->>col.key AS live_value, replayed->>col.key AS replayed_value
              FROM shown
              LEFT JOIN LATERAL (
                    SELECT key FROM jsonb_object_keys(coalesce(live, replayed)) AS key
                     WHERE live IS NOT NULL AND replayed IS NOT NULL
                       AND live->>key IS DISTINCT FROM replayed->>key) col ON true
             ORDER BY \(order), column_name
            """)
        guard let first = rows.first else { return (0, []) }
        let differences = try rows.map { row in
            ProjectionDifference(
                table: table.name,
                key: try key.indices.map { (key[$0], try row.decode("key\($0)", as: String.self)) },
                userId: try row.decode("user_id"),
                kind: ProjectionDifference.Kind(rawValue: try row.decode("kind")) ?? .changed,
                column: try row.decode("column_name"),
                live: try row.decode("live_value"),
                replayed: try row.decode("replayed_value"))
        }
        return (try first.decode("differing", as: Int.self), differences)
    }
}

/// What `ProjectionVerifier.verify` found.
public struct VerifyReport: Sendable {
    /// Events the replay applied.
    public var events: Int
    /// The greatest position it applied.
    public var lastPosition: Int64
    /// Per table, how many rows differ (0 for equal tables).
    public var differingRows: [String: Int] = [:]
    /// The differences, table by table, up to the verifier's limit of rows per table.
    public var differences: [ProjectionDifference] = []

    /// True when every table equals its replay.
    public var isEqual: Bool { differingRows.values.allSatisfy { $0 == 0 } }
}
