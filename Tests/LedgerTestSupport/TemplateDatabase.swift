import Foundation
import Postgres
import Synchronization
import PurchaseLedger

/// The migrated database that test databases are cloned from (`CREATE DATABASE … TEMPLATE`),
/// so that a test costs one file copy instead of a `CREATE DATABASE` and a whole migration.
///
/// Its name carries the fingerprint of the schema built into this binary
/// (`LedgerVersion.schemaFingerprint`: every migration's and definition's name and checksum),
/// so a schema change gets a template of its own and a stale one is never used. It is built
/// once per server and name: under a session advisory lock keyed by that fingerprint (several
/// test processes may start at once), by the real `Migrator`, under a temporary name that is
/// renamed only once the migration committed, so a process killed half-way leaves no
/// half-migrated template behind.
enum TemplateDatabase {
    /// `ledger_tpl_` and 16 hex digits of the schema's fingerprint.
    static let name = "ledger_tpl_" + String(LedgerVersion.schemaFingerprint.prefix(16))

    /// The advisory lock key: the fingerprint's first 64 bits.
    static var lockKey: Int64 {
        Int64(bitPattern: UInt64(LedgerVersion.schemaFingerprint.prefix(16), radix: 16)!)
    }

    /// Servers (conninfos) this process has made sure of.
    private static let ready = Mutex<Set<String>>([])

    /// Makes sure the template exists on `server`, building it when missing; returns its name.
    /// Blocks; callers serialise through `ready`'s lock, so one process builds it once.
    static func ensure(on server: String) throws -> String {
        try ready.withLock { servers in
            if servers.contains(server) { return name }
            try build(on: server)
            servers.insert(server)
            return name
        }
    }

    private static func build(on server: String) throws {
        let admin = try Connection.connect(ConnectionConfiguration("\(server) dbname=postgres"))
        defer { admin.close() }
        try admin.query("SELECT pg_advisory_lock(\(lockKey))")
        defer { _ = try? admin.query("SELECT pg_advisory_unlock(\(lockKey))") }
        if try exists(name, admin) { return }
        let building = "ledger_tpl_building_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        try admin.execute("CREATE DATABASE \(identifier: building)")
        do {
            let connection = try Connection.connect(ConnectionConfiguration("\(server) dbname=\(building)"))
            defer { connection.close() }
            _ = try Migrator().migrate(connection)
        } catch {
            _ = try? admin.execute("DROP DATABASE IF EXISTS \(identifier: building) WITH (FORCE)")
            throw error
        }
        try admin.execute("ALTER DATABASE \(identifier: building) RENAME TO \(identifier: name)")
    }

    private static func exists(_ database: String, _ admin: Connection) throws -> Bool {
        try !admin.query("SELECT 1 FROM pg_database WHERE datname = \(database)").isEmpty
    }
}
