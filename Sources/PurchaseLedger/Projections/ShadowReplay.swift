import Postgres

/// Replays the log into shadow projection tables: `ledger.install_projections(schema)` creates
/// them and `<schema>.project_range(from, to)` fills them, the same statements the live append
/// path runs, in batches of `batchSize` events (one statement each, set-based). On a distributed
/// log the shadow tables are distributed as the live ones, and the statements run on the workers.
struct ShadowReplay {
    /// The shadow schema, such as `ledger_rebuild`.
    let schema: String
    /// Events per `project_range` call.
    let batchSize: Int

    /// What a replay saw.
    struct Outcome {
        /// What the transaction's snapshot showed (`ledger.log_seen()`: the snapshot as text, and
        /// on a cluster each worker group's greatest position): the replay applied exactly
        /// those events.
        var snapshot: String
        /// How many events it applied.
        var events: Int
        /// The greatest position it applied (0 for an empty log).
        var lastPosition: Int64
        /// The statements that make the indexes it deferred and did not build (`rebuildIndexes`
        /// false), for ``buildIndexes(_:on:progress:)`` in a later transaction.
        var deferredIndexes: [String] = []
    }

    /// Inside an open REPEATABLE READ transaction on `connection`: creates the shadow tables and
    /// applies every event of the transaction's snapshot.
    ///
    /// With `deferIndexes`, the load runs without the indexes it does not need: every secondary
    /// index, every unique key, and the primary keys of the tables other than `keysKept` (a table
    /// that project_range writes with ON CONFLICT, or whose rows it looks up by key, needs its
    /// primary key). When `rebuildIndexes`, they are built again afterwards from their own
    /// definitions (`pg_get_constraintdef`, `pg_get_indexdef`): building an index once is much
    /// cheaper than maintaining it row by row. `unlogged` skips the WAL for tables that never
    /// outlive the transaction (a verify).
    func run(on connection: Connection, deferIndexes: Bool, keysKept: Set<String>, rebuildIndexes: Bool,
             unlogged: Bool, progress: (ReplayProgress) -> Void) throws -> Outcome {
        // Sorts (lineages) and hash joins (consumes, refunds) of a batch fit in memory.
        try connection.execute("SELECT set_config('work_mem', '64MB', true), set_config('maintenance_work_mem', '256MB', true)")
        try connection.query("SELECT ledger.install_projections(\(schema))")
        let tables = try connection.query("""
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = \(schema) AND c.relkind = 'r' ORDER BY c.relname
            """).map { try $0.decode(0, as: String.self) }
        if unlogged {
            for table in tables { try connection.execute("ALTER TABLE \(identifier: schema).\(identifier: table) SET UNLOGGED") }
        }
        let deferred = deferIndexes ? try dropIndexes(connection, keysKept: keysKept) : []
        // On a distributed log the shadow tables are placed as the live ones are, each colocated
        // with its live table (ledger.distribute_shadow; nothing on one server), once their
        // deferred indexes are gone: each index dropped afterwards would be a statement per shard.
        try connection.query("SELECT ledger.distribute_shadow(\(schema))")

        let head = try connection.query("""
            SELECT ledger.log_seen() AS snapshot, count(*)::bigint AS events,
                   coalesce(max(position), 0)::bigint AS last
              FROM ledger.events
            """)[0]
        let total = try head.decode("events", as: Int.self)
        let last = try head.decode("last", as: Int64.self)
        // The position that ends each batch of exactly batchSize events (positions have gaps).
        // Where commands run on the workers of a Citus cluster (the snapshot names each worker
        // group's greatest position, `ledger.log_seen()`), one range: the positions order each
        // node's events, not one node's against another's, and a command on one node can follow
        // one of another on the same payment (a refund routed by '' after its purchase on the
        // user's worker); ranges by position would apply the refund first and lose it. One
        // range applies every event set-based, as the live path orders them (docs/scale-out.md,
        // "The replay's order across nodes").
        let acrossNodes = try head.decode("snapshot", as: String.self).contains(" ")
        let ends = acrossNodes ? [] : try connection.query("""
            SELECT position FROM (SELECT position, row_number() OVER (ORDER BY position) AS n FROM ledger.events) e
             WHERE n % \(batchSize) = 0 ORDER BY position
            """).map { try $0.decode(0, as: Int64.self) }
        var done = 0
        var from: Int64 = 1
        progress(ReplayProgress(phase: .replaying, eventsDone: 0, eventsTotal: total))
        let bounds = ends + (ends.last == last ? [] : [last])
        for (index, end) in bounds.enumerated() where total > 0 {
            try connection.query("SELECT \(identifier: schema).project_range(\(from), \(end))")
            let batch = index + 1
            // project_range keeps its plans for the session (force_generic_plan), and the first
            // are made on empty tables: there a lookup by key looks no cheaper than a scan of the
            // whole table, which each range would then repeat. ANALYZE after batches 1, 2, 4, 8, …
            // makes the next range plan again on the tables as they are: log2(batches) passes,
            // none after the last range. A sample of 3,000 rows (statistics target 10, not 100)
            // gives the sizes the plans need at a twentieth of the cost; the final ANALYZE below
            // keeps the server's target.
            if batch & (batch - 1) == 0, batch < bounds.count {
                try analyze(try tablesAnalyzedMidway(tables, on: connection), on: connection, statisticsTarget: "10")
            }
            done = acrossNodes ? total : min(total, done + batchSize)
            progress(ReplayProgress(phase: .replaying, eventsDone: done, eventsTotal: total))
            from = end + 1
        }
        // The entitled spans the ranges deferred, for every lineage at once, before the
        // comparison or the swap reads them (Schema/definitions/projections/entitled_spans_step.sql).
        try connection.query("SELECT ledger.settle_spans(\(schema))")
        if rebuildIndexes {
            try buildIndexes(deferred, on: connection, events: total, progress: progress)
        }
        return Outcome(snapshot: try head.decode("snapshot"), events: total, lastPosition: last,
                       deferredIndexes: rebuildIndexes ? [] : deferred)
    }

    /// Builds the indexes a replay deferred (`statements`, from its ``Outcome``) and ANALYZEs the
    /// shadow tables: at the end of the replay's transaction, or in a transaction of its own on a
    /// distributed log, where Citus runs no schema change on a table that the transaction wrote
    /// shard by shard in parallel.
    func buildIndexes(_ statements: [String], on connection: Connection, events: Int,
                      progress: (ReplayProgress) -> Void) throws {
        if !statements.isEmpty {
            progress(ReplayProgress(phase: .indexing, eventsDone: events, eventsTotal: events))
            for statement in statements { try connection.execute(SQL(unsafeSQL: statement)) }
        }
        let tables = try connection.query("""
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = \(schema) AND c.relkind = 'r' ORDER BY c.relname
            """).map { try $0.decode(0, as: String.self) }
        try analyze(tables, on: connection)
    }

    /// ANALYZEs the shadow schema's `tables`, with `statisticsTarget` in place of the server's
    /// `default_statistics_target` for this call only when given.
    /// The tables to ANALYZE between the replay's ranges: all of them, but the catalogs on a
    /// Citus cluster. There a catalog is a reference table with a copy on the coordinator, which
    /// the ranges wrote through local execution, and Citus refuses an ANALYZE that would reach
    /// every copy at once after that ("cannot execute command because a local execution has
    /// accessed a placement in the transaction"). The catalogs are a few rows; the ANALYZE after
    /// the replay covers them.
    private func tablesAnalyzedMidway(_ tables: [String], on connection: Connection) throws -> [String] {
        let reference = Set(try connection.query("""
            SELECT t FROM ledger.reference_tables_in(\(schema)) AS t
            """).compactMap { try $0.decode("t", as: String?.self) })
        return tables.filter { !reference.contains($0) }
    }

    private func analyze(_ tables: [String], on connection: Connection, statisticsTarget: String? = nil) throws {
        let serverTarget = try statisticsTarget.map { target in
            let kept = try connection.query("SELECT current_setting('default_statistics_target')")[0].decode(0, as: String.self)
            try connection.execute("SELECT set_config('default_statistics_target', \(target), true)")
            return kept
        }
        for table in tables { try connection.execute("ANALYZE \(identifier: schema).\(identifier: table)") }
        if let serverTarget {
            try connection.execute("SELECT set_config('default_statistics_target', \(serverTarget), true)")
        }
    }

    /// Drops the shadow schema's secondary indexes, its unique keys, and the primary keys of the
    /// tables not in `keysKept`; returns the statements that make them again, keys first.
    private func dropIndexes(_ connection: Connection, keysKept: Set<String>) throws -> [String] {
        let keys = try connection.query("""
            SELECT t.relname AS table_name, k.conname, k.contype::text AS kind,
                   format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', \(schema)::text, t.relname, k.conname,
                          pg_get_constraintdef(k.oid)) AS definition
              FROM pg_constraint k
              JOIN pg_class t ON t.oid = k.conrelid
              JOIN pg_namespace n ON n.oid = t.relnamespace
             WHERE n.nspname = \(schema) AND k.contype IN ('p', 'u')
             ORDER BY t.relname, k.conname
            """)
        var statements: [String] = []
        // A kept table keeps its primary key only: project_range's ON CONFLICT and lookups use
        // no other, and each unique key kept would be one more index to maintain row by row.
        for row in keys where try row.decode("kind", as: String.self) == "u"
            || !keysKept.contains(try row.decode("table_name", as: String.self)) {
            try connection.execute("""
                ALTER TABLE \(identifier: schema).\(identifier: try row.decode("table_name", as: String.self))
                 DROP CONSTRAINT \(identifier: try row.decode("conname", as: String.self))
                """)
            statements.append(try row.decode("definition"))
        }
        let indexes = try connection.query("""
            SELECT c.relname, pg_get_indexdef(i.indexrelid) AS definition
              FROM pg_index i
              JOIN pg_class c ON c.oid = i.indexrelid
              JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = \(schema)
               AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid)
             ORDER BY c.relname
            """)
        for row in indexes {
            try connection.execute("DROP INDEX \(identifier: schema).\(identifier: try row.decode("relname", as: String.self))")
            statements.append(try row.decode("definition"))
        }
        return statements
    }
}
