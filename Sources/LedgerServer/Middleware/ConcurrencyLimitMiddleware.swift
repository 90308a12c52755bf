import HTTPTypes
import Hummingbird
import Synchronization

/// Lets at most `limit` requests run at once; the next one is answered 503 `OVERLOADED` with
/// `Retry-After` at once, so a burst never queues without bound in front of the pool.
/// Health checks and metrics are not limited, so an overloaded server still answers them.
struct ConcurrencyLimitMiddleware: RouterMiddleware {
    typealias Context = LedgerRequestContext
    let limit: Int
    private let counter = RunningCount()

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        if Self.unlimited.contains(request.uri.path) { return try await next(request, context) }
        let now = counter.running.add(1, ordering: .relaxed).newValue
        guard now <= limit else {
            counter.running.subtract(1, ordering: .relaxed)
            throw APIError(.serviceUnavailable, "OVERLOADED", "more than \(limit) requests at once; try again",
                           headers: [.retryAfter: "1"])
        }
        defer { counter.running.subtract(1, ordering: .relaxed) }
        return try await next(request, context)
    }

    private static let unlimited: Set<String> = ["/healthz", "/readyz", "/metrics"]
}

/// The number of requests running, shared by every copy of the middleware.
private final class RunningCount: Sendable {
    let running = Atomic<Int>(0)
}
