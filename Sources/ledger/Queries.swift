import ArgumentParser
import Foundation
import PurchaseLedger
import LedgerJSON

extension StoreCode: ExpressibleByArgument {}

struct Unconsumed: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A user's payments whose goods were not handed out yet (neither consumed nor refunded).")

    @Option(name: .customLong("user"), help: "The user ID.")
    var userId: String

    @Option(name: .customLong("store"), help: "Only this store (AS or GG); repeat for several.")
    var stores: [StoreCode] = []

    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        try validateUser(userId)
    }

    func run() throws {
        let connection = try database.connect()
        defer { connection.close() }
        let payments = try connection.unconsumed(userId: userId, stores: Set(stores))
        if output.json {
            var w = JSONWriter()
            w.beginArray()
            for payment in payments { payment.write(into: &w) }
            w.endArray()
            print(w.string)
        } else {
            print(Table(
                ["paymentSeq", "store", "product", "type", "price", "purchased (UTC)", "expires (UTC)"],
                payments.map {
                    [$0.paymentSeq, $0.storeCode.rawValue, $0.productId, $0.productType.rawValue,
                     "\($0.price) \($0.currency)", $0.purchaseTime.ledgerText, $0.expiryTime?.ledgerText ?? ""]
                }).render(empty: "no unconsumed payments for \(userId)"))
        }
    }
}

struct Subscriptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A user's subscriptions at an instant (default now), from the projections.")

    @Option(name: .customLong("user"), help: "The user ID.")
    var userId: String

    @Option(name: .customLong("store"), help: "Only this store (AS or GG); repeat for several.")
    var stores: [StoreCode] = []

    @Option(help: "The instant: ISO-8601 with a zone, e.g. 2026-01-15T00:00:00Z (default: now).")
    var at: Instant?

    @Flag(help: "Also list expired and revoked lineages.")
    var includeExpired = false

    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        try validateUser(userId)
    }

    func run() throws {
        let instant = at?.date ?? Date()
        let connection = try database.connect()
        defer { connection.close() }
        let subscriptions = try connection.subscriptions(userId: userId, stores: Set(stores), at: instant,
                                                         includeExpired: includeExpired)
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
                }).render(empty: "no \(includeExpired ? "" : "active ")subscriptions for \(userId) at \(instant.ledgerText)"))
        }
    }
}

/// A usage error (exit 2, nothing on standard output) for a user ID the contract refuses,
/// naming `--user` and never printing the value back.
private func validateUser(_ userId: String) throws {
    do {
        try LedgerCommand.validateUserId(userId, field: "--user")
    } catch {
        throw ValidationError(error.message)
    }
}
