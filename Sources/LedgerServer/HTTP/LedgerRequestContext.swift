import Hummingbird
import NIOCore

/// The per-request context of `ledger serve`: Hummingbird's core storage plus who the caller is.
public struct LedgerRequestContext: RequestContext {
    /// Hummingbird's own per-request storage (logger, route parameters, matched path).
    public var coreContext: CoreRequestContextStorage
    /// The API key the request showed, once `RequireRole` accepted it (never the key itself).
    public var apiKeyId: Int64?
    /// The connection the request came on: a report watches it to stop when the client hangs up.
    public let channel: any Channel

    /// A context for a request on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
