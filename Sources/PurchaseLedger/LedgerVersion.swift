/// The version of this build of the ledger, as `ledger --version` prints it.
///
/// SwiftPM has no version field for a package's own code and the installed binary must not ask
/// git at run time, so the version is this constant, raised in the commit that a release tag
/// names. The schema part is the newest migration built into the binary (`Migration.all`), so
/// an operator can tell which schema `ledger migrate` would bring a database to.
public enum LedgerVersion {
    /// The release: semantic versioning, `MAJOR.MINOR.PATCH`.
    public static let release = "0.1.0"

    /// The newest migration's number in this build.
    public static var schema: Int { Migration.all.last?.version ?? 0 }

    /// `0.1.0 (schema 0009)`.
    public static var description: String {
        let number = String(schema)
        return "\(release) (schema \(String(repeating: "0", count: max(0, 4 - number.count)) + number))"
    }
}
