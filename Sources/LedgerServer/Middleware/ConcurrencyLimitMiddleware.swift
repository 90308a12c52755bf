import HTTPTypes
import Hummingbird
import Synchronization

/// Lets at most `limit` requests run at once; the next one is answered 503 `OVERLOADED` with
/// `Retry-After` at once, so a burst never queues without bound in front of the pool.
///
/// The limit is split in two shares: the store webhooks (`/notifications/*`, which need no key
/// on Apple's route) get a quarter of it (at least 1), every other route the rest, each counted
/// on its own. So anyone who can reach the webhooks can at most fill their share, and keyed
/// callers (`/v1/*`) always have theirs. Health checks and metrics are not limited, so an
/// overloaded server still answers them.
struct ConcurrencyLimitMiddleware: RouterMiddleware {
    typealias Context = LedgerRequestContext
    /// The webhooks' share.
    let webhookLimit: Int
    /// Everything else's share.
    let otherLimit: Int
    private let webhooks = RunningCount()
    private let others = RunningCount()

    init(limit: Int) {
        webhookLimit = max(1, limit / 4)
        otherLimit = max(1, limit - webhookLimit)
    }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        if Self.unlimited.contains(request.uri.path) { return try await next(request, context) }
        // The route matched (not the path as sent), so no spelling of a path moves a request
        // from one share to the other.
        let webhook = context.endpointPath?.hasPrefix("/notifications/") == true
        let (counter, limit) = webhook ? (webhooks, webhookLimit) : (others, otherLimit)
        let now = counter.running.add(1, ordering: .relaxed).newValue
        guard now <= limit else {
            counter.running.subtract(1, ordering: .relaxed)
            throw APIError(.serviceUnavailable, "OVERLOADED",
                           "more than \(limit) \(webhook ? "store notifications" : "requests") at once; try again",
                           headers: [.retryAfter: "1"])
        }
        defer { counter.running.subtract(1, ordering: .relaxed) }
        return try await next(request, context)
    }

    private static let unlimited: Set<String> = ["/healthz", "/readyz", "/metrics"]
}

/// The number of requests running in one share, shared by every copy of the middleware.
private final class RunningCount: Sendable {
    let running = Atomic<Int>(0)
}
