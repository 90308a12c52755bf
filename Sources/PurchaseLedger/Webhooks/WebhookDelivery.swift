import Foundation
import StoreAPIs
import Synchronization

/// One webhook delivery's POST (a job of kind `webhook.delivery`, run by ``JobRunner``): the body
/// fixed when the delivery was written, signed now (``WebhookSignature``), with the event id and
/// the attempt in headers. A 2xx answer is a delivery; anything else is retried with the job's
/// backoff for three days (``StoreAPIError/isRetryable``), then kept as failed.
enum WebhookDelivery {
    /// Each endpoint's URL and secret, read once per ``ttl`` rather than once per delivery (a
    /// third of a delivery's round trips to the database). A removal fails the endpoint's
    /// deliveries in the database at once, so none is claimed after it; one already claimed may
    /// still go out, as `ledger webhooks remove` says.
    final class Targets: Sendable {
        static let ttl: TimeInterval = 5
        private let cache = Mutex<[Int64: (target: (url: String, secret: String)?, read: Date)]>([:])

        init() {}

        func target(_ endpoint: Int64, ledger: Ledger) async throws -> (url: String, secret: String)? {
            if let hit = cache.withLock({ $0[endpoint] }), Date().timeIntervalSince(hit.read) < Self.ttl { return hit.target }
            let target = try await ledger.webhookTarget(endpoint)
            cache.withLock { $0[endpoint] = (target, Date()) }
            return target
        }
    }

    static func send(job: ClaimedJob, ledger: Ledger, client: StoreHTTPClient?, targets: Targets) async throws {
        guard let client else { throw JobRunner.PermanentFailure(description: "this runner sends no webhooks") }
        guard let endpoint = job.args["endpoint"].flatMap({ Int64($0) }), let body = job.args["body"],
              let eventId = job.args["eventId"] else {
            throw JobRunner.PermanentFailure(description: "the delivery names no endpoint, event or body")
        }
        guard let target = try await targets.target(endpoint, ledger: ledger) else {
            throw JobRunner.PermanentFailure(description: "the endpoint was removed")
        }
        let bytes = Data(body.utf8)
        let timestamp = Int64(Date().timeIntervalSince1970)
        try await client.deliverWebhook(url: target.url, headers: [
            ("Content-Type", "application/json"),
            ("User-Agent", "PurchaseLedger/\(LedgerVersion.release)"),
            ("Ledger-Event-Id", eventId),
            ("Ledger-Event-Type", job.args["type"] ?? ""),
            ("Ledger-Delivery-Attempt", String(job.attempt)),
            (WebhookSignature.header, WebhookSignature.value(secret: target.secret, timestamp: timestamp, body: bytes)),
        ], body: bytes)
    }
}
