import Crypto

/// The version of this build of the ledger, as `ledger --version` prints it.
///
/// SwiftPM has no version field for a package's own code and the installed binary must not ask
/// git at run time, so the release is this constant, raised in the commit that a release tag
/// names. The schema part tells which schema `ledger migrate` would bring a database to: the
/// newest versioned migration built in, and a fingerprint of every migration and definition.
public enum LedgerVersion {
    /// The release: semantic versioning, `MAJOR.MINOR.PATCH`.
    public static let release = "0.1.0"

    /// The newest versioned migration's number in this build.
    public static var schema: Int { Migration.all.last?.version ?? 0 }

    /// SHA-256 (hex) of every embedded migration's and definition's name and checksum, in
    /// order: two builds with the same fingerprint install the same schema.
    public static let schemaFingerprint: String = {
        let lines = Migration.all.map { "migration \($0.name) \($0.checksum)\n" }
            + Definition.all.map { "definition \($0.path) \($0.checksum)\n" }
        return SHA256.lowercaseHex(of: Array(lines.joined().utf8))
    }()

    /// `0.1.0 (schema 0001, 1a2b3c4d5e6f)`: the release, the newest migration, the fingerprint's
    /// first twelve digits.
    public static var description: String {
        let number = String(schema)
        let padded = String(repeating: "0", count: max(0, 4 - number.count)) + number
        return "\(release) (schema \(padded), \(schemaFingerprint.prefix(12)))"
    }
}
