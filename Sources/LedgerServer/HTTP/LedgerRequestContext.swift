import Hummingbird

/// The per-request context of `ledger serve`: Hummingbird's core storage plus who the caller is.
public struct LedgerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The API key the request showed, once `RequireRole` accepted it (never the key itself).
    public var apiKeyId: Int64?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }
}
