import Hummingbird

/// The per-request context of `ledger serve`: Hummingbird's core storage plus who the caller is.
public struct LedgerRequestContext: RequestContext {
    /// Hummingbird's own per-request storage (logger, route parameters, matched path).
    public var coreContext: CoreRequestContextStorage
    /// The API key the request showed, once `RequireRole` accepted it (never the key itself).
    public var apiKeyId: Int64?

    /// A context for a request on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
