import Crypto
import Foundation
import LedgerJSON
import Logging
import StoreAPIs

/// Recovers what the stores said while their notifications did not arrive (an outage, a wrong
/// URL) by asking for it (docs/contract.md §6.3, §6.4): Google's voided purchases and Apple's
/// Notification History, each applied exactly as the delivered notification would have been,
/// so what was already received is a `duplicate`. Transient store errors are retried here.
public struct Reconciler: Sendable {
    let ledger: Ledger
    let stores: StoreAPIConfiguration
    let http: StoreHTTPClient
    let logger: Logger
    /// Attempts of one store read before the reconciliation gives up.
    var attempts = 5

    public init(ledger: Ledger, stores: StoreAPIConfiguration, http: StoreHTTPClient,
                logger: Logger = Logger(label: "ledger.reconcile")) {
        self.ledger = ledger
        self.stores = stores
        self.http = http
        self.logger = logger
    }

    public enum Failure: Error, CustomStringConvertible {
        /// The store's API for this reconciliation is not configured (names the variable).
        case notConfigured(String)

        public var description: String {
            switch self {
            case .notConfigured(let what): "\(what) is not set: the store cannot be asked"
            }
        }
    }

    /// `ledger reconcile google`: every voided purchase of the accepted packages between the
    /// two instants, page by page, applied as a `voidedPurchaseNotification`; one outcome per
    /// purchase, in the order the store listed them.
    public func google(since: Date, until: Date = Date()) async throws -> [CommandOutcome] {
        guard let configured = stores.google else { throw Failure.notConfigured("LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE") }
        let client = configured.client(http: http)
        var outcomes: [CommandOutcome] = []
        for package in ledger.stores.googlePackageNames.sorted() {
            let voided = try await retrying { try await client.allVoidedPurchases(packageName: package, startTime: since, endTime: until) }
            for purchase in voided {
                outcomes.append(try await apply(purchase, package: package))
            }
        }
        return outcomes
    }

    /// `ledger reconcile apple`: Get Notification History for each accepted bundle id and
    /// environment between the two instants, every page, each signed payload received as
    /// `POST /notifications/apple` would receive it.
    public func apple(since: Date, until: Date = Date()) async throws -> [CommandOutcome] {
        guard let configured = stores.apple else { throw Failure.notConfigured("LEDGER_APPLE_API_KEY_FILE") }
        var outcomes: [CommandOutcome] = []
        for bundle in ledger.stores.appleBundleIds.sorted() {
            let client = configured.client(bundleId: bundle, http: http)
            for name in ledger.stores.appleEnvironments.sorted(by: >) {
                let environment: AppStoreEnvironment = name == "Sandbox" ? .sandbox : .production
                let payloads = try await retrying {
                    try await client.allNotificationHistory(startDate: since, endDate: until, environment: environment)
                }
                for payload in payloads {
                    var w = JSONWriter()
                    w.beginObject()
                    w.field("type", "appleNotification")
                    w.field("signedPayload", payload)
                    w.endObject()
                    outcomes.append(try await ledger.receiveStoreNotification(Array(w.string.utf8)))
                }
            }
        }
        return outcomes
    }

    /// A voided purchase as §5.3's `voidedPurchaseNotification` of the same order.
    private func apply(_ purchase: VoidedPurchase, package: String) async throws -> CommandOutcome {
        let digest = SHA256.lowercaseHex(of: Array(purchase.purchaseToken.utf8))
        let voidedAt = purchase.voidedTimeMillis.flatMap { Timestamp(checkedEpochMilliseconds: $0)?.date } ?? Date()
        guard let order = purchase.orderId else {
            return CommandOutcome(rejected: LedgerError.invalid("voidedPurchases.orderId", "missing for the purchase voided at \(Timestamp(voidedAt).iso8601Microseconds)"))
        }
        var proof = JSONWriter()
        proof.beginObject()
        proof.field("api", "purchases.voidedpurchases.list")
        proof.field("packageName", package)
        proof.field("orderId", order)
        proof.field("purchaseTokenSha256", digest)
        proof.field("purchaseTimeMillis", purchase.purchaseTimeMillis.map(String.init))
        proof.field("voidedTimeMillis", purchase.voidedTimeMillis.map(String.init))
        proof.field("voidedSource", purchase.voidedSource.map(String.init))
        proof.field("voidedReason", purchase.voidedReason.map(String.init))
        proof.endObject()
        var notification = StoreNotification(
            storeCode: .googlePlay, notificationId: "voided:\(order):\(purchase.voidedTimeMillis.map(String.init) ?? "")",
            notificationType: "voided", effect: .refund, effectiveAt: voidedAt, proof: proof.string)
        notification.purchaseTokenSha256 = digest
        notification.orderId = order
        notification.refundAt = voidedAt
        notification.reason = "voided"
        return try await ledger.execute(.notification(notification))
    }

    /// Runs a store read again after a transient failure (about 1, 2, 4, 8 s, or the store's
    /// Retry-After), up to `attempts` times.
    private func retrying<T: Sendable>(_ read: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await read()
            } catch let error as StoreAPIError where error.isRetryable && attempt < attempts {
                let delay = max(JobRunner.backoff(attempt: attempt, max: .seconds(60)),
                                .milliseconds(Int(((error.retryAfter ?? 0) * 1000).rounded(.up))))
                logger.info("reconcile: \(error); trying again in \(delay)")
                try await Task.sleep(for: delay)
                attempt += 1
            }
        }
    }
}
