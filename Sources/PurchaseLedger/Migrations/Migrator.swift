import Postgres

/// Applies the missing migrations, each in its own transaction, under an advisory lock, so it is
/// safe to run again and from several processes at once. Records version and checksum in
/// `ledger.schema_migrations` and refuses to run when an applied file has changed.
public struct Migrator: Sendable {
    /// The advisory lock key (the bytes of "LEDGMIGR").
    static let lockKey: Int64 = 0x4C45_4447_4D49_4752

    public let migrations: [Migration]

    public init(migrations: [Migration] = Migration.all) {
        self.migrations = migrations
    }

    /// Brings the database up to date. Returns the names of the migrations it applied.
    @discardableResult
    public func migrate(_ connection: Connection, progress: (Migration) -> Void = { _ in }) throws -> [String] {
        try connection.query("SELECT pg_advisory_lock(\(Self.lockKey))")
        defer { _ = try? connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))") }
        try connection.executeScript(unsafeSQL: """
            SET client_min_messages = warning;
            CREATE SCHEMA IF NOT EXISTS ledger;
            CREATE TABLE IF NOT EXISTS ledger.schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            """)
        let applied = try appliedChecksums(connection)
        if let unknown = applied.keys.filter({ version in !migrations.contains { $0.version == version } }).min() {
            throw MigrationError.unknownVersion(unknown, name: applied[unknown]!.name)
        }
        var done: [String] = []
        for migration in migrations {
            if let recorded = applied[migration.version] {
                guard recorded.checksum == migration.checksum else {
                    throw MigrationError.changed(migration.name)
                }
                continue
            }
            progress(migration)
            try connection.transaction { tx in
                try tx.executeScript(unsafeSQL: migration.sql)
                try tx.query("""
                    INSERT INTO ledger.schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """)
            }
            done.append(migration.name)
        }
        return done
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
}

/// Why the migrator refused to run.
public enum MigrationError: Error, CustomStringConvertible, Equatable {
    /// An applied migration's file is not the one that was applied.
    case changed(String)
    /// The database has a migration this build does not know: it is newer than this ledger.
    case unknownVersion(Int, name: String)

    public var description: String {
        switch self {
        case .changed(let name):
            "migration \(name) was changed after it was applied; released migrations are never edited: add a new one"
        case .unknownVersion(let version, let name):
            "the database has migration \(version) (\(name)), which this ledger does not know: use a newer ledger"
        }
    }
}
