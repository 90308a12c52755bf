import ArgumentParser
import Postgres
import PurchaseLedger

/// Options every database command takes.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"),
            help: "A postgresql:// URL or key=value conninfo. Default: $DATABASE_URL, then libpq's PG* variables.")
    var databaseURL: String?

    /// Runs `body` with a `Ledger` of `poolSize` connections (one: the library's calls, as the
    /// README shows them) and closes it; a database that cannot be reached exits 2 with a
    /// one-line reason.
    func withLedger<T>(reportTimeout: Duration? = Ledger.defaultReportTimeout, poolSize: Int = 1,
                       _ body: (Ledger) async throws -> T) async throws -> T {
        let ledger = Ledger(databaseURL: databaseURL, poolSize: poolSize, reportTimeout: reportTimeout, logger: LedgerLog.logger)
        do {
            let value = try await body(ledger)
            await ledger.close()
            return value
        } catch {
            await ledger.close()
            throw error
        }
    }

    /// Opens one connection (exit 2 with a one-line reason when that fails), for the commands that
    /// hold one connection for their whole run (migrate, ingest, rebuild, verify).
    func connect() throws -> Connection {
        try Connection.connect(Ledger.configuration(databaseURL))
    }
}
