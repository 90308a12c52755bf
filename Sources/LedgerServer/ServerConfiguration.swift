import Foundation
import PurchaseLedger

/// Everything `ledger serve` is configured with, beside the database URL.
public struct ServerConfiguration: Sendable {
    /// The address to listen on (`LEDGER_HTTP_HOST`).
    public var host = "127.0.0.1"
    /// The port (`LEDGER_HTTP_PORT`); 0 picks a free one.
    public var port = 8080
    /// Which store notifications are accepted (docs/contract.md §5.1).
    public var stores: StoreConfiguration = .none
    /// How Google's push requests prove they come from Pub/Sub (nil: only API keys with the
    /// `notifications` role are accepted on `/notifications/google`).
    public var googlePush: GooglePushAuthentication?
    /// The largest request body, in bytes, of every route but the batch route (413 beyond).
    public var maxBodyBytes = 1 << 20
    /// The largest body of `POST /v1/batch`.
    public var maxBatchBytes = 64 << 20
    /// Requests handled at once; one more is answered 503 at once instead of queueing. A quarter
    /// of them (at least 1) is the share of the unauthenticated store webhooks
    /// (`/notifications/*`), the rest is everyone else's, so webhook traffic cannot take the
    /// slots keyed callers need.
    public var maxConcurrentRequests = 256
    /// A keep-alive connection idle this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// How long the server may wait for a request's bytes, from its first byte to its last (head
    /// and body); beyond it the request is answered 408 `REQUEST_TIMEOUT` and the connection
    /// closed. Only the time the server spends asking for bytes the client has not sent counts,
    /// not the time the server is busy and not reading (a streamed batch being applied).
    public var requestTimeout: Duration = .seconds(30)
    /// How long a key's revocation may take to reach a running server.
    public var keyRefreshInterval: Duration = .seconds(5)
    /// How long one report may run before the database stops it (`LEDGER_REPORT_TIMEOUT`); nil
    /// for no limit. The ledger is made with it (`Ledger(reportTimeout:)`).
    public var reportTimeout: Duration? = Ledger.defaultReportTimeout

    public init() {}
}

/// How `POST /notifications/google` authenticates Pub/Sub: an OIDC token, or a shared secret in
/// the URL (`?token=…`), or both.
public struct GooglePushAuthentication: Sendable {
    /// Checks the `Authorization: Bearer` OIDC token Pub/Sub sends.
    public var oidc: GoogleOIDCVerifier?
    /// The secret the push endpoint URL carries as `?token=`.
    public var sharedSecret: String?

    public init(oidc: GoogleOIDCVerifier? = nil, sharedSecret: String? = nil) {
        self.oidc = oidc
        self.sharedSecret = sharedSecret
    }
}
