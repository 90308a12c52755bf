import Crypto

/// One numbered SQL file from `Schema/`, carried inside the binary.
public struct Migration: Sendable, Hashable {
    /// The number the file name starts with.
    public let version: Int
    /// The file name, such as `0001_event_log.sql`.
    public let name: String
    /// The SQL text.
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

    /// Every migration of this build, in order.
    public static let all: [Migration] = EmbeddedSchema.files
        .compactMap { Migration(name: $0.name, sql: $0.sql) }
        .sorted { $0.version < $1.version }
}
