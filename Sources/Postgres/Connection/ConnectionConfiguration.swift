/// Where and how to connect: the arguments of `PQconnectdbParams`.
public struct ConnectionConfiguration: Sendable {
    /// A `postgresql://` URL or a `key=value` conninfo, expanded by libpq (`expand_dbname = 1`).
    /// The empty string means libpq's defaults and `PG*` environment variables.
    public var conninfo: String
    /// A database name that overrides the one in `conninfo` (a second `dbname` keyword); nil keeps it.
    public var database: String?
    /// The `application_name` shown in `pg_stat_activity`.
    public var applicationName: String

    /// A configuration from a conninfo or URL.
    public init(_ conninfo: String = "", database: String? = nil, applicationName: String = "purchase-ledger") {
        self.conninfo = conninfo
        self.database = database
        self.applicationName = applicationName
    }

    /// Keyword/value pairs in the order libpq processes them: later ones override earlier ones.
    var parameters: [(keyword: String, value: String)] {
        [("dbname", conninfo)] + (database.map { [("dbname", $0)] } ?? []) + [("application_name", applicationName)]
    }
}
