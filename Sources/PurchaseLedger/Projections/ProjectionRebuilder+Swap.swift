import Foundation
import Logging
import Postgres

extension ProjectionRebuilder {
    /// Tries the swap until it gets its locks, catching up without locks between attempts.
    /// Returns the events applied under the lock of the attempt that committed.
    func swapWithRetries(seen: inout String, summary: inout RebuildSummary) throws -> Int {
        // The first locks (the writers' gate, every table in share update exclusive mode, then
        // payments) and the last (the log) are taken while holding nothing a writer holding
        // something waits for (a command waiting at the gate holds nothing yet): they may wait
        // past deadlock_timeout, which also makes the server cancel an autovacuum that holds a
        // table.
        // The locks in between are taken while holding payments: their waits stay well under
        // deadlock_timeout, so that when a writer and the swap wait for each other, the swap
        // gives up first and the writer never sees a deadlock.
        let deadlockMilliseconds = try connection.query("""
            SELECT (extract(epoch FROM current_setting('deadlock_timeout')::interval) * 1000)::bigint AS ms
            """)[0].decode("ms", as: Int.self)
        let longWait = max(200, deadlockMilliseconds * 2)
        let deadline = Date().addingTimeInterval(swapDeadline)
        var attempt = 0
        while true {
            attempt += 1
            summary.swapAttempts = attempt
            do {
                return try swapOnce(seen: seen, longWait: longWait, deadlockMilliseconds: deadlockMilliseconds)
            } catch let inDoubt as ClusterSnapshot.InDoubt {
                try clusterSnapshot.waitForCitusRecovery(inDoubt: inDoubt.count, deadline: deadline)
            } catch let error as PostgresError
                where error.sqlState == .lockNotAvailable || error.sqlState == .deadlockDetected {
                guard Date() < deadline else {
                    throw RebuildError.swapLocksUnavailable(seconds: Int(swapDeadline), attempts: attempt)
                }
                logger.notice("rebuild: the swap could not take its locks in time; catching up and trying again",
                              metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                let pass = try catchUp(after: seen)
                seen = pass.snapshot
                summary.caughtUp += pass.applied
                Thread.sleep(forTimeInterval: Double.random(in: 0.01...0.05) * Double(min(attempt, 10)))
            }
        }
    }

    /// One attempt: in one transaction, lock, apply what `seen` did not show, swap, drop the old
    /// tables. Throws `lockNotAvailable` when a lock wait timed out (nothing changed).
    private func swapOnce(seen: String, longWait: Int, deadlockMilliseconds: Int) throws -> Int {
        let shadow = Self.shadowSchema, retired = Self.retiredSchema
        let all = projections.flatMap { set in set.tables.map { (schema: set.liveSchema, name: $0.name) } }
        return try connection.transaction { c in
            // The live tables there are: a table new in this build's definitions has no live
            // twin yet (a database adopted from release 0007 lacks the notification tables).
            let live = Set(try c.query("""
                SELECT i FROM unnest(\(PostgresArray(elements: all.map { .text($0.schema) }))::text[],
                                     \(PostgresArray(elements: all.map { .text($0.name) }))::text[]) WITH ORDINALITY AS t(s, n, i)
                 WHERE to_regclass(format('%I.%I', s, n)) IS NOT NULL
                """).map { try $0.decode("i", as: Int.self) - 1 })
            let tables = all.indices.filter(live.contains).map { all[$0] }
            let qualified = tables.map { "\($0.schema).\($0.name)" }
            // Catalog text below (view definitions) comes out schema-qualified.
            try c.execute("SELECT set_config('search_path', 'pg_catalog', true)")
            // On a distributed log the swap's last events are applied over one connection per
            // worker, shard after shard: Citus runs no schema change (the swap's renames) on a
            // table that the transaction wrote shard by shard in parallel. Nothing on one server.
            let distributed = try c.query("""
                SELECT set_config('citus.multi_shard_modify_mode', 'sequential', true) WHERE ledger.distributed_log()
                """).count == 1
            let before = try dependents(c, of: qualified)
            if let materialized = before.first(where: { $0.kind == "m" }) {
                throw RebuildError.materializedViewDepends(materialized.name)
            }
            // A vacuum (autovacuum, most often: the tables a rebuild swapped in are new and large)
            // holds a table in share update exclusive mode, and the short waits below would give
            // up on it and retry until it ends. This mode waits for it, long enough for the server
            // to cancel an autovacuum in the way (after deadlock_timeout), and conflicts with no
            // writer's lock; held to the end, it keeps a new vacuum off these tables. By name, the
            // order in which ledger.refresh_statistics analyses them, so that the two never wait
            // for each other in a circle.
            try c.execute("SELECT set_config('lock_timeout', \("\(longWait)ms"), true)")
            // The writers' gate (ledger.writers_gate), which every command takes first, shared:
            // the commands in flight end, and a new one waits here before it touches any table.
            // A command holding a registry it read while it waits for a table held here would
            // make every attempt give up.
            try c.execute("SELECT pg_advisory_xact_lock(ledger.writers_gate())")
            if distributed { try holdWorkersGates(c) }
            let byName = tables.sorted { $0.name < $1.name }.map(name)
            try c.execute("LOCK TABLE \(byName.joined(separator: ", ")) IN SHARE UPDATE EXCLUSIVE MODE")
            // Every command takes the gate first, so none is in flight now; a query may be. Payments
            // first, with the long wait (a query reading it ends), then the dependent views, the
            // other tables, and the log (appends in flight finish first).
            try c.execute("LOCK TABLE \(name(tables[0])) IN ACCESS EXCLUSIVE MODE")
            // View names come quoted from the catalog (format('%I.%I')).
            let rest = before.filter { $0.kind == "v" }.map { SQL(unsafeSQL: $0.name) } + tables.dropFirst().map(name)
            // Each of these waits is bounded, and all of them together stay under half of deadlock_timeout.
            let shortWait = max(10, deadlockMilliseconds / (2 * (rest.count + 1)))
            try c.execute("SELECT set_config('lock_timeout', \("\(shortWait)ms"), true)")
            if !rest.isEmpty {
                try c.execute("LOCK TABLE \(rest.joined(separator: ", ")) IN ACCESS EXCLUSIVE MODE")
            }
            try c.execute("SELECT set_config('lock_timeout', \("\(longWait)ms"), true)")
            try c.execute("LOCK TABLE ledger.events IN SHARE MODE")
            try c.execute("SELECT set_config('lock_timeout', '0', true)")
            // On a cluster no command is in flight now, but a transaction may still be prepared on
            // a worker after a crash: its events would stay invisible to the catch-up below.
            if distributed { try ClusterSnapshot.refuseInDoubt(c) }

            // No event can commit now: apply the last ones.
            let applied = try c.query("SELECT ledger.project_unseen(\(shadow), \(seen)) AS n")[0]
                .decode("n", as: Int.self)

            let objects = try dependents(c, of: qualified)
            for statement in try accessStatements(c, tables: qualified) { try c.executeScript(unsafeSQL: statement) }
            try c.execute("CREATE SCHEMA \(identifier: retired)")
            for table in tables {
                try c.execute("ALTER TABLE \(identifier: table.schema).\(identifier: table.name) SET SCHEMA \(identifier: retired)")
            }
            for table in all {
                try c.execute("ALTER TABLE \(identifier: shadow).\(identifier: table.name) SET SCHEMA \(identifier: table.schema)")
            }
            // Views and SQL-body functions bound the old tables: define them again, by name.
            for object in objects { try c.executeScript(unsafeSQL: object.definition) }
            // RESTRICT: anything still bound to the old tables stops the swap instead of vanishing.
            let old: [SQL] = tables.map { "\(identifier: retired).\(identifier: $0.name)" }
            try c.execute("DROP TABLE \(old.joined(separator: ", "))")
            try c.execute("DROP SCHEMA \(identifier: retired)")
            try c.execute("DROP SCHEMA \(identifier: shadow) CASCADE")
            // On a Citus coordinator the new tables take the old ones' places on the cluster
            // (a reference table for the products); nothing on plain PostgreSQL.
            try c.execute("SELECT ledger.distribute()")
            return applied
        }
    }

    /// On a cluster, the writers' gate of every worker group too, in the swap's transaction: a
    /// command run on a worker (pushed down to its user's worker, or sent there) takes the gate
    /// on that worker. `ledger.hold_writers_gate(route)` takes it alone, and Citus runs it on the
    /// worker holding the route's shard of the log (`ledger.worker_routes()`) as a part of this
    /// transaction, whose renames of distributed tables make it a 2PC: each worker's gate opens
    /// when its part commits, after the coordinator's. A call that ran on another group (a shard
    /// moved) is a lock not taken: the swap gives up and tries again. A worker holding no shard of
    /// the log holds no user's rows, and no command of the ledger runs there.
    private func holdWorkersGates(_ c: Connection) throws {
        try c.callOnEachWorker("hold_writers_gate") { group, route, held in
            PostgresError(kind: .client, message: "the writers' gate of worker group \(group): its route \(route) ran on group \(held)",
                          sqlState: .lockNotAvailable)
        }
    }

    /// A view, materialized view or SQL-body function bound to one of the tables.
    private struct Dependent {
        var kind: String
        var name: String
        /// The statement that defines it again (`CREATE OR REPLACE ...`).
        var definition: String
    }

    /// The views (`v`), materialized views (`m`) and SQL-standard-body functions (`f`) that
    /// reference the tables directly. Run with search_path = pg_catalog, so that definitions
    /// name every table with its schema.
    private func dependents(_ c: Connection, of tables: [String]) throws -> [Dependent] {
        let rows = try c.query("""
            SELECT DISTINCT v.relkind::text AS kind, format('%I.%I', n.nspname, v.relname) AS name,
                   format('CREATE OR REPLACE VIEW %I.%I%s AS %s', n.nspname, v.relname,
                          CASE WHEN v.reloptions IS NULL THEN ''
                               ELSE ' WITH (' || array_to_string(v.reloptions, ', ') || ')' END,
                          pg_get_viewdef(v.oid)) AS definition
              FROM pg_depend d
              JOIN pg_rewrite r ON r.oid = d.objid
              JOIN pg_class v ON v.oid = r.ev_class
              JOIN pg_namespace n ON n.oid = v.relnamespace
             WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
               AND d.refobjid = ANY (\(PostgresArray(elements: tables.map { .text($0) }))::text[]::regclass[])
               AND v.oid <> d.refobjid
            UNION
            SELECT DISTINCT 'f', p.oid::regprocedure::text, pg_get_functiondef(p.oid)
              FROM pg_depend d
              JOIN pg_proc p ON p.oid = d.objid
             WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_class'::regclass
               AND d.refobjid = ANY (\(PostgresArray(elements: tables.map { .text($0) }))::text[]::regclass[])
             ORDER BY 1, 2
            """)
        return try rows.map {
            Dependent(kind: try $0.decode("kind"), name: try $0.decode("name"), definition: try $0.decode("definition"))
        }
    }

    /// Statements that give each shadow table its live twin's owner, grants (on the table and on
    /// its columns) and comments
    /// (install_projections already grants ledger_reader and ledger_writer; operators may have
    /// granted more).
    private func accessStatements(_ c: Connection, tables: [String]) throws -> [String] {
        try c.query("""
            WITH live AS (
                SELECT c.oid, c.relname, c.relowner, c.relacl FROM pg_class c
                 WHERE c.oid = ANY (\(PostgresArray(elements: tables.map { .text($0) }))::text[]::regclass[])
            )
            SELECT 1 AS step, format('ALTER TABLE %I.%I OWNER TO %I', \(Self.shadowSchema)::text, l.relname,
                                     pg_get_userbyid(l.relowner)) AS statement
              FROM live l JOIN pg_class s ON s.oid = to_regclass(format('%I.%I', \(Self.shadowSchema)::text, l.relname))
             WHERE s.relowner <> l.relowner
            UNION ALL
            SELECT 2, format('GRANT %s ON %I.%I TO %s%s', a.privilege_type, \(Self.shadowSchema)::text, l.relname,
                             CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                             CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
              FROM live l, aclexplode(l.relacl) a
             WHERE a.grantee <> l.relowner
            UNION ALL
            SELECT 2, format('GRANT %s (%I) ON %I.%I TO %s%s', a.privilege_type, att.attname, \(Self.shadowSchema)::text,
                             l.relname,
                             CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                             CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
              FROM live l
              JOIN pg_attribute att ON att.attrelid = l.oid AND att.attnum > 0 AND att.attacl IS NOT NULL,
                   aclexplode(att.attacl) a
             WHERE a.grantee <> l.relowner
            UNION ALL
            SELECT 3, CASE WHEN d.objsubid = 0
                           THEN format('COMMENT ON TABLE %I.%I IS %L', \(Self.shadowSchema)::text, l.relname, d.description)
                           ELSE format('COMMENT ON COLUMN %I.%I.%I IS %L', \(Self.shadowSchema)::text, l.relname,
                                       a.attname, d.description) END
              FROM live l
              JOIN pg_description d ON d.objoid = l.oid AND d.classoid = 'pg_class'::regclass
              LEFT JOIN pg_attribute a ON a.attrelid = l.oid AND a.attnum = d.objsubid AND d.objsubid > 0
             ORDER BY 1, 2
            """).map { try $0.decode("statement", as: String.self) }
    }

    /// `"schema"."name"`.
    private func name(_ table: (schema: String, name: String)) -> SQL {
        "\(identifier: table.schema).\(identifier: table.name)"
    }
}
