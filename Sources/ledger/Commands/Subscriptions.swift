import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger

struct Subscriptions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A user's subscriptions at an instant (default now), from the projections.")

    @OptionGroup var user: UserOptions
    @OptionGroup var stores: StoreFilterOptions

    @Option(help: "The instant: ISO-8601 with a zone, e.g. 2026-01-15T00:00:00Z (default: now).")
    var at: Instant?

    @Flag(help: "Also list expired and revoked lineages.")
    var includeExpired = false

    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let instant = at?.date ?? Date()
        let subscriptions = try await database.withLedger {
            try await $0.subscriptions(userId: user.userId, stores: stores.set, at: instant, includeExpired: includeExpired)
        }
        if output.json {
            var w = JSONWriter()
            w.beginArray()
            for subscription in subscriptions { subscription.write(into: &w) }
            w.endArray()
            print(w.string)
        } else {
            print(Table(
                ["store", "originalTransactionId", "product", "status", "expires (UTC)", "grace ends (UTC)", "autoRenewing", "latestPayment"],
                subscriptions.map {
                    [$0.storeCode.rawValue, $0.originalTransactionId, $0.productId, $0.status.rawValue,
                     $0.expiryTime?.ledgerText ?? "-", $0.gracePeriodExpiryTime?.ledgerText ?? "-", $0.autoRenewing ? "yes" : "no", $0.latestPaymentSeq]
                }).render(empty: "no \(includeExpired ? "" : "active ")subscriptions for \(user.userId) at \(instant.ledgerText)"))
        }
    }
}
