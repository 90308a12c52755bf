import Postgres

/// Brings a database to this build's schema, under an advisory lock, so it is safe to run again
/// and from several processes at once:
///
/// 1. the versioned migrations it lacks (`Schema/migrations/`), recorded with their checksums
///    in `ledger.schema_migrations`; an applied one whose file changed is refused;
/// 2. every definition (`Schema/definitions/`), in a fixed order, when any of them differs from
///    what `ledger.schema_definitions` records (all of them, so that a function dropped and
///    created again takes whatever depends on it along), the field rules' rows among them;
/// 3. on a Citus coordinator with workers, the tables `ledger.distribute()` places across the
///    cluster and has not placed yet (docs/scale-out.md);
/// 4. when the projections' definitions changed under live projection tables, a rebuild of the
///    projections from the log (shadow tables, replay, swap), never an `ALTER` of their rows.
///    Appends run the new definitions against the live tables from the commit of steps 1 to 3
///    until the swap, so a column they write is added to the live tables by a versioned
///    migration (step 1). Before committing, the migrator checks that it was, and refuses
///    otherwise (`MigrationError.projectionShape`).
///
/// Steps 1 to 3 run in one transaction: a failure leaves the database as it was. A database
/// made by the first releases (migrations `0001_event_log.sql` … `0009`, which defined functions
/// too) is adopted in that same transaction: see `LegacyMigrations`.
public struct Migrator: Sendable {
    /// The advisory lock key (the bytes of "LEDGMIGR").
    static let lockKey: Int64 = 0x4C45_4447_4D49_4752

    public let migrations: [Migration]
    public let definitions: [Definition]

    public init(migrations: [Migration] = Migration.all, definitions: [Definition] = Definition.all) {
        self.migrations = migrations
        self.definitions = definitions
    }

    /// Brings the database up to date. Returns what it did, one line each: the versioned
    /// migrations it applied (by name), `definitions (N files)` when it applied them,
    /// `placed on the Citus cluster: TABLES` when it placed some, and `rebuilt the projections
    /// (N events)` when it rebuilt them. Calls `progress` with a line for a person before each
    /// step (`applying 0001_baseline.sql`, `rebuilding the projections`).
    @discardableResult
    public func migrate(_ connection: Connection, progress: (String) -> Void = { _ in }) throws -> [String] {
        try connection.query("SELECT pg_advisory_lock(\(Self.lockKey))")
        defer { _ = try? connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))") }
        var done: [String] = []
        let rebuild = try connection.transaction { tx -> Bool in
            try tx.executeScript(unsafeSQL: """
                SET LOCAL client_min_messages = warning;
                CREATE SCHEMA IF NOT EXISTS ledger;
                CREATE TABLE IF NOT EXISTS ledger.schema_migrations (
                    version    integer PRIMARY KEY,
                    name       text NOT NULL,
                    checksum   text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                );
                CREATE TABLE IF NOT EXISTS ledger.schema_definitions (
                    path       text PRIMARY KEY,
                    checksum   text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                );
                """)
            let liveProjections = try tx.query("SELECT to_regclass('ledger.payments') IS NOT NULL AS live")[0]
                .decode("live", as: Bool.self)
            var applied = try appliedChecksums(tx)
            var recorded = try recordedDefinitions(tx)
            let adopting = try LegacyMigrations.adopt(tx, applied: applied)
            if adopting {
                progress("adopting a database of the first releases")
                done.append("adopted a database of the first releases")
                applied = try appliedChecksums(tx)
                recorded = [:]
            }
            if let unknown = applied.keys.filter({ version in !migrations.contains { $0.version == version } }).min() {
                throw MigrationError.unknownVersion(unknown, name: applied[unknown]!.name)
            }
            for migration in migrations {
                if let existing = applied[migration.version] {
                    guard existing.checksum == migration.checksum else { throw MigrationError.changed(migration.name) }
                    continue
                }
                progress("applying \(migration.name)")
                try tx.executeScript(unsafeSQL: migration.sql)
                try tx.query("""
                    INSERT INTO ledger.schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """)
                done.append(migration.name)
            }
            let current = Dictionary(uniqueKeysWithValues: definitions.map { ($0.path, $0.checksum) })
            var rebuild = false
            if current != recorded {
                let line = "definitions (\(definitions.count) files)"
                progress("applying \(line)")
                try apply(tx)
                done.append(line)
                // New projection definitions over existing tables: those tables are rebuilt.
                let projections = { (map: [String: String]) in map.filter { $0.key.hasPrefix("projections/") } }
                rebuild = liveProjections && projections(current) != projections(recorded)
                // The first releases' tables predate the rule: their appends wait for the rebuild.
                if rebuild && !adopting { try refuseLiveTablesTheNewDefinitionsCannotWrite(tx) }
            }
            // A ledger moved onto a Citus cluster: its functions are older than the extension,
            // and Citus sends a function to the workers when it is made. Made again before the
            // tables are placed, they reach every node, as a new database's do.
            if current == recorded, try tx.query("""
                SELECT ledger.distribution_due() AS due WHERE to_regprocedure('ledger.distribution_due()') IS NOT NULL
                """).first?.decode("due", as: Bool.self) == true {
                try apply(tx)
            }
            let placed = try tx.query("""
                SELECT array_to_string(ledger.distribute(), ', ') AS placed
                 WHERE to_regprocedure('ledger.distribute()') IS NOT NULL
                """).first?.decode("placed", as: String.self) ?? ""
            if !placed.isEmpty { done.append("placed on the Citus cluster: \(placed)") }
            try makeWorkersScratchTables(tx)
            return rebuild
        }
        if rebuild {
            progress("rebuilding the projections")
            let summary = try ProjectionRebuilder(connection: connection).rebuild()
            done.append("rebuilt the projections (\(summary.events) events)")
        }
        return done
    }

    /// On a Citus cluster whose log is distributed, each worker's own scratch tables of the
    /// deferred spans (`ledger.make_spans_scratch`, which the definitions run on this node): a
    /// command run on a worker writes them there. One statement a worker, in this transaction
    /// (`ledger.spans_scratch_on(route)`, ``Connection/callOnEachWorker(_:mismatch:)``). Each run
    /// of `ledger migrate` makes them again, so a worker added since gets its own.
    private func makeWorkersScratchTables(_ tx: Connection) throws {
        guard try tx.query("SELECT to_regprocedure('ledger.spans_scratch_on(text)') IS NOT NULL AS made")[0]
            .decode("made", as: Bool.self) else { return }
        try tx.callOnEachWorker("spans_scratch_on") { group, route, made in
            PostgresError(kind: .client, message: "the scratch tables of worker group \(group): its route \(route) ran on group \(made); run ledger migrate again")
        }
    }

    /// Runs every definition in order and records them, in the caller's transaction. Function
    /// bodies are not checked against tables while they are created (as pg_dump does): the live
    /// projection tables come after the functions that name them.
    private func apply(_ tx: Connection) throws {
        try tx.execute("SELECT set_config('check_function_bodies', 'off', true)")
        // On a Citus database the log's append-only triggers are made again on a log that may be
        // distributed, where Citus refuses a trigger unless told that it fires on the shards
        // (docs/scale-out.md).
        try tx.execute("""
            SELECT set_config('citus.enable_unsafe_triggers', 'on', true) FROM pg_extension WHERE extname = 'citus'
            """)
        for definition in definitions {
            do {
                if definition.path == FieldRules.definitionPath {
                    try FieldRules.load(json: definition.sql, into: tx)
                } else {
                    try tx.executeScript(unsafeSQL: definition.sql)
                }
            } catch let error as PostgresError {
                throw MigrationError.definitionFailed(definition.path, error.description)
            }
        }
        try tx.execute("SELECT set_config('check_function_bodies', 'on', true)")
        try tx.execute("DELETE FROM ledger.schema_definitions")
        for definition in definitions {
            try tx.query("""
                INSERT INTO ledger.schema_definitions (path, checksum) VALUES (\(definition.path), \(definition.checksum))
                """)
        }
    }

    /// The scratch schema where the new definitions' projection tables are made, to be compared.
    static let shapeSchema = "ledger_shape"

    /// Appends between this transaction's commit and the rebuild's swap write the live tables
    /// with the new definitions' statements. So the live tables must have every column the new
    /// tables have, of the same type, and no `NOT NULL` column without a default that the new
    /// tables lack (their inserts would leave it null). The new tables are made in a scratch
    /// schema of this transaction (`ledger.install_projections`) and compared column by
    /// column; every gap is named, and the whole migration is refused.
    private func refuseLiveTablesTheNewDefinitionsCannotWrite(_ tx: Connection) throws {
        try tx.execute("DROP SCHEMA IF EXISTS \(identifier: Self.shapeSchema) CASCADE")
        try tx.query("SELECT ledger.install_projections(\(Self.shapeSchema))")
        let gaps = try tx.query("""
            WITH columns AS (
                SELECT n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
                       format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AND NOT a.atthasdef AS required
                  FROM pg_class c
                  JOIN pg_namespace n ON n.oid = c.relnamespace
                  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                 WHERE n.nspname IN ('ledger', \(Self.shapeSchema)) AND c.relkind IN ('r', 'p')),
            new AS (SELECT * FROM columns WHERE schema_name = \(Self.shapeSchema)),
            live AS (SELECT * FROM columns
                      WHERE schema_name = 'ledger' AND table_name IN (SELECT table_name FROM new))
            SELECT gap FROM (
                SELECT new.table_name, new.column_name,
                       CASE WHEN live.type IS NULL
                            THEN format('ledger.%I has no column %I (%s)', new.table_name, new.column_name, new.type)
                            ELSE format('ledger.%I.%I is %s, not %s', new.table_name, new.column_name, live.type, new.type)
                       END AS gap
                  FROM new LEFT JOIN live USING (table_name, column_name)
                 WHERE live.type IS DISTINCT FROM new.type
                UNION ALL
                SELECT live.table_name, live.column_name,
                       format('ledger.%I.%I is NOT NULL without a default, and the new definitions do not write it',
                              live.table_name, live.column_name)
                  FROM live LEFT JOIN new USING (table_name, column_name)
                 WHERE live.required AND new.column_name IS NULL) AS g
             ORDER BY table_name, column_name
            """).map { try $0.decode("gap", as: String.self) }
        try tx.execute("DROP SCHEMA \(identifier: Self.shapeSchema) CASCADE")
        if !gaps.isEmpty { throw MigrationError.projectionShape(gaps) }
    }

    /// The migrations the database has, by version.
    public func appliedChecksums(_ connection: Connection) throws -> [Int: (name: String, checksum: String)] {
        let rows = try connection.query("SELECT version, name, checksum FROM ledger.schema_migrations")
        var result: [Int: (name: String, checksum: String)] = [:]
        for row in rows {
            result[try row.decode("version", as: Int.self)] = (try row.decode("name"), try row.decode("checksum"))
        }
        return result
    }

    /// The definitions the database has, by path.
    public func recordedDefinitions(_ connection: Connection) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try connection.query("SELECT path, checksum FROM ledger.schema_definitions") {
            result[try row.decode("path", as: String.self)] = try row.decode("checksum", as: String.self)
        }
        return result
    }
}

/// Why the migrator refused to run.
public enum MigrationError: Error, CustomStringConvertible, Equatable {
    /// An applied migration's file is not the one that was applied.
    case changed(String)
    /// The database has a migration this build does not know: it is newer than this ledger.
    case unknownVersion(Int, name: String)
    /// A definition failed to apply (nothing was changed).
    case definitionFailed(String, String)
    /// Adopting a database of the first releases would drop an object someone else made on ours.
    case adoptionBlocked(String)
    /// New projection definitions write what the live projection tables cannot take before the
    /// rebuild replaces them (each gap named): a versioned migration must add it first.
    case projectionShape([String])

    public var description: String {
        switch self {
        case .changed(let name):
            "migration \(name) was changed after it was applied; released migrations are never edited: add a new one"
        case .unknownVersion(let version, let name):
            "the database has migration \(version) (\(name)), which this ledger does not know: use a newer ledger"
        case .definitionFailed(let path, let error):
            "Schema/definitions/\(path) failed, nothing was changed: \(error)"
        case .adoptionBlocked(let detail):
            "cannot adopt this database of the first releases, nothing was changed: \(detail)"
        case .projectionShape(let gaps):
            "the new projection definitions write what the live projection tables cannot take before the rebuild "
                + "replaces them, nothing was changed: \(gaps.joined(separator: "; ")); "
                + "a versioned migration (Schema/migrations/) must change the live tables first"
        }
    }
}
