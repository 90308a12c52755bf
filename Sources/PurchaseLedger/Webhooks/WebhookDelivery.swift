import Foundation
import StoreAPIs

/// One webhook delivery's POST (a job of kind `webhook.delivery`, run by ``JobRunner``): the body
/// fixed when the delivery was written, signed now (``WebhookSignature``), with the event id and
/// the attempt in headers. A 2xx answer is a delivery; anything else is retried with the job's
/// backoff for three days (``StoreAPIError/isRetryable``), then kept as failed.
enum WebhookDelivery {
    static func send(job: ClaimedJob, ledger: Ledger, client: StoreHTTPClient?) async throws {
        guard let client else { throw JobRunner.PermanentFailure(description: "this runner sends no webhooks") }
        guard let endpoint = job.args["endpoint"].flatMap({ Int64($0) }), let body = job.args["body"],
              let eventId = job.args["eventId"] else {
            throw JobRunner.PermanentFailure(description: "the delivery names no endpoint, event or body")
        }
        guard let target = try await ledger.webhookTarget(endpoint) else {
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
