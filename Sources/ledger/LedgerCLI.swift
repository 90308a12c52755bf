import ArgumentParser
import Foundation
import Postgres
import PurchaseLedger

/// `ledger`: the operator's command. Parses arguments, calls the library, prints.
@main
struct LedgerCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "An event-sourced purchase ledger over PostgreSQL for App Store and Google Play payments.",
        version: LedgerVersion.description,
        subcommands: [Migrate.self, Ingest.self, Unconsumed.self, Subscriptions.self, Lookup.self, History.self, Events.self, Demo.self, Analytics.self, Rebuild.self, Verify.self,
                      Serve.self, Keys.self, Jobs.self, Webhooks.self, Reconcile.self]
    )

    /// Runs the command; exit status 2 for a usage error or an unreachable database, with a
    /// one-line reason on standard error (docs/contract.md §2.6).
    static func main() async {
        do {
            try LedgerLog.bootstrap()
        } catch {
            Terminal.fail("ledger: \(error)")
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let error as PostgresError {
            // A notification line from a login without ledger_store (README, "Who can do what").
            let storeRole = error.sqlState == .insufficientPrivilege && error.message.contains("function notify")
            Terminal.fail("ledger: \(error)" + (storeRole ? "; store notifications need a login granted ledger_store" : ""))
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
