import Crypto

/// One versioned migration from `Schema/migrations/`, carried inside the binary: what the ledger
/// keeps (the log, types, roles, schemas). Append-only once released: its checksum is recorded.
public struct Migration: Sendable, Hashable {
    /// The number the file name starts with.
    public let version: Int
    /// The file name, such as `0001_baseline.sql`.
    public let name: String
    /// The SQL text.
    /// The file's text: SQL, or for a data file (`.json`), the data.
    public let sql: String
    /// SHA-256 of the SQL text, hex: an applied migration whose file changed is refused.
    public let checksum: String

    init?(name: String, sql: String) {
        guard let version = Int(name.prefix(while: \.isNumber)), version > 0 else { return nil }
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = SHA256.lowercaseHex(of: Array(sql.utf8))
    }

    /// The same migration with other SQL text (for tests of the changed-file refusal).
    public static func edited(_ migration: Migration, sql: String) -> Migration? {
        Migration(name: migration.name, sql: sql)
    }

    /// Every versioned migration of this build, in order.
    public static let all: [Migration] = EmbeddedSchema.files
        .filter { $0.path.hasPrefix("migrations/") }
        .compactMap { Migration(name: String($0.path.dropFirst("migrations/".count)), sql: $0.text) }
        .sorted { $0.version < $1.version }
}

/// One definition from `Schema/definitions/`: the current text of one function or view (or of
/// the live projections), written to be run again (`CREATE OR REPLACE`), or the rows of a table
/// derived from a data file (`rules/field_rules.json`: ``FieldRules``). `ledger migrate`
/// applies every definition, in ``all``'s order, whenever one of them changed.
public struct Definition: Sendable, Hashable {
    /// The path under `Schema/definitions/`, such as `commands/consume.sql`.
    public let path: String
    /// The concern it belongs to: its folder (`rules`, `log`, `projections`, `commands`,
    /// `queries`, `analytics`, `analytics/views`).
    public var group: String { path.split(separator: "/").dropLast().joined(separator: "/") }
    public let sql: String
    /// SHA-256 of the SQL text, hex.
    public let checksum: String

    init(path: String, sql: String) {
        self.path = path
        self.sql = sql
        self.checksum = SHA256.lowercaseHex(of: Array(sql.utf8))
    }

    /// The same definition with other SQL text (for tests).
    public static func edited(_ definition: Definition, sql: String) -> Definition {
        Definition(path: definition.path, sql: sql)
    }

    /// The order of the concerns: each may use what the ones before it define, and the views,
    /// which PostgreSQL checks when they are created, come after the live projection tables.
    /// The rules are data the command functions read when they run. What places tables on a Citus
    /// cluster comes last: the migrator calls it after every definition is in place.
    public static let groups = ["rules", "log", "projections", "commands", "queries", "webhooks", "analytics", "analytics/views",
                                "citus"]

    /// Every definition of this build, by group in ``groups``' order, then by file name.
    public static let all: [Definition] = EmbeddedSchema.files
        .filter { $0.path.hasPrefix("definitions/") }
        .map { Definition(path: String($0.path.dropFirst("definitions/".count)), sql: $0.text) }
        .sorted { a, b in
            let (ga, gb) = (groups.firstIndex(of: a.group) ?? groups.count, groups.firstIndex(of: b.group) ?? groups.count)
            return ga != gb ? ga < gb : a.path < b.path
        }
}
