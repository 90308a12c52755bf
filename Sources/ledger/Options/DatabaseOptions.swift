import ArgumentParser
import Postgres
import PurchaseLedger

/// Options every database command takes.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"),
            help: "A postgresql:// URL or key=value conninfo. Default: $DATABASE_URL, then libpq's PG* variables.")
    var databaseURL: String?

    /// Opens one connection (exit 2 with a one-line reason when that fails).
    func connect() throws -> Connection {
        try Connection.connect(Ledger.configuration(databaseURL))
    }
}
