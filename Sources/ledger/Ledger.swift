import ArgumentParser
import Foundation
import Postgres
import PurchaseLedger

/// `ledger`: the operator's command. Parses arguments, calls the library, prints.
@main
struct LedgerCLI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "An event-sourced purchase ledger over PostgreSQL for App Store and Google Play payments.",
        version: LedgerVersion.description,
        subcommands: [Migrate.self, Ingest.self, Unconsumed.self, Subscriptions.self, Demo.self, Analytics.self, Rebuild.self, Verify.self,
                      Serve.self, Keys.self]
    )

    /// Runs the command; exit status 2 for a usage error or an unreachable database, with a
    /// one-line reason on standard error (CONTRACT.md §2.6).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let error as PostgresError {
            Terminal.fail("ledger: \(error)")
        } catch let error as MigrationError {
            Terminal.fail("ledger: \(error)")
        } catch let error as InputError {
            Terminal.fail("ledger: \(error)")
        } catch let error as LedgerError {
            Terminal.fail("ledger: \(error)", status: 1)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            Terminal.fail("ledger: \(fullMessage(for: error))")
        }
    }
}

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

/// An instant given on the command line: ISO-8601 with a zone (a usage error otherwise).
struct Instant: ExpressibleByArgument {
    let date: Date

    init?(argument: String) {
        guard let stamp = Timestamp.parseISO8601(argument) else { return nil }
        date = stamp.date
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// `--json` for programs, a table for people otherwise.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print a JSON array instead of a table.")
    var json = false
}

enum Terminal {
    static func fail(_ message: String, status: Int32 = 2) -> Never {
        let line = message.split(separator: "\n", omittingEmptySubsequences: true).joined(separator: " ")
        FileHandle.standardError.write(Data((line + "\n").utf8))
        exit(status)
    }

    static var isTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
}
