import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger
import StoreAPIs

/// `ledger reconcile google|apple`: what the stores said while their notifications did not
/// arrive (docs/contract.md §6.3, §6.4); `ledger reconcile parked`: the parked notifications a
/// line missed on a cluster.
struct Reconcile: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask a store for what its notifications may have missed, and apply it; release what a line missed.",
        discussion: "google and apple print one result line per purchase or notification, as ingest does; parked prints how many it released. Exit status: 0, 1 when one was refused, 2 for a usage error or when the store or the database cannot be reached.",
        subcommands: [Google.self, Apple.self, Parked.self])

    struct Window: ParsableArguments {
        @Option(help: "From this instant (ISO-8601 with a zone).")
        var since: Instant

        @Option(help: "Until this instant (default: now).")
        var until: Instant?
    }

    struct Google: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Google Play's voided purchases (purchases.voidedpurchases), applied as voidedPurchaseNotification.")

        @OptionGroup var window: Window
        @OptionGroup var options: StoreAPIOptions

        func run() async throws {
            try await Reconcile.report(window, options) { try await $0.google(since: $1, until: $2) }
        }
    }

    struct Apple: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The App Store's Notification History, each signed payload applied as if delivered.")

        @OptionGroup var window: Window
        @OptionGroup var options: StoreAPIOptions

        func run() async throws {
            try await Reconcile.report(window, options) { try await $0.apple(since: $1, until: $2) }
        }
    }

    struct Parked: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Release the parked store notifications whose owner the ledger knows now.",
            discussion: "A payment's line releases what is parked about it. Where commands run on a Citus cluster's workers, a line can miss a notification parked at the same moment (docs/scale-out.md); `ledger serve` releases those every minute, and this does it now. Prints how many were released.")

        @Option(help: "Only those appended from this instant (ISO-8601 with a zone; default: every parked notification).")
        var since: Instant?

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let released = try await database.withLedger { try await $0.releaseOwnedParked(since: since?.date) }
            print("released \(released) parked notification\(released == 1 ? "" : "s")")
        }
    }

    /// Reconciles over the window and prints the outcomes as ingest's result lines; a store that
    /// cannot be reached or is not configured exits 2.
    static func report(_ window: Window, _ options: StoreAPIOptions,
                       _ reconcile: (Reconciler, Date, Date) async throws -> [CommandOutcome]) async throws {
        let outcomes: [CommandOutcome]
        do {
            outcomes = try await options.withStores { ledger, api, http in
                try await reconcile(Reconciler(ledger: ledger, stores: api, http: http, logger: LedgerLog.logger),
                                    window.since.date, window.until?.date ?? Date())
            }
        } catch let error as StoreAPIError {
            Terminal.fail("ledger: \(error)")
        } catch let error as Reconciler.Failure {
            Terminal.fail("ledger: \(error)")
        }
        for (index, outcome) in outcomes.enumerated() {
            var w = JSONWriter()
            outcome.write(into: &w, line: index + 1)
            print(w.string)
        }
        if outcomes.contains(where: { $0.status == .rejected }) { throw ExitCode(1) }
    }
}
