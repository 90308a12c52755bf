import Hummingbird
import Logging
import NIOCore
import PurchaseLedger
import ServiceLifecycle

/// `ledger serve`: the ledger over HTTP. A thin layer: each route maps a request to one library
/// call and the outcome to a status; every rule stays in the library and the database.
///
/// ```swift
/// let ledger = Ledger(databaseURL: url, poolSize: 16, stores: stores)
/// let app = LedgerServer.application(ledger: ledger, configuration: configuration, logger: logger)
/// try await app.runService()          // SIGTERM/SIGINT: stop accepting, finish requests in flight
/// await ledger.close()
/// ```
public enum LedgerServer {
    /// The Hummingbird application: routes, middleware, limits; it neither opens nor closes the pool.
    /// - Parameter onServerRunning: called with the bound port once the server listens (port 0 picks one).
    public static func application(ledger: Ledger, configuration: ServerConfiguration, logger: Logger,
                                   metrics: ServerMetrics = ServerMetrics(),
                                   onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol {
        Application(
            router: router(ledger: ledger, configuration: configuration, logger: logger, metrics: metrics),
            server: .http1(configuration: .init(
                // Per connection, between the HTTP codec and Hummingbird: JSON for the parser's
                // refusals, the bound on how long a request may take to arrive, and a report
                // cancelled when its client hangs up.
                additionalChannelHandlers: [ParserErrorHandler(),
                                            RequestTimeoutHandler(limit: configuration.requestTimeout, logger: logger),
                                            HangUpHandler()],
                idleTimeout: .nanoseconds(Int64(configuration.idleTimeout.components.seconds) * 1_000_000_000))),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                    serverName: nil),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Every route, and the middleware in front of them: the request log and metrics first, then
    /// the concurrency limit, then each group's role check.
    static func router(ledger: Ledger, configuration: ServerConfiguration, logger: Logger,
                       metrics: ServerMetrics) -> Router<LedgerRequestContext> {
        let router = Router(context: LedgerRequestContext.self)
        router.add(middleware: RequestLogMiddleware(logger: logger, metrics: metrics))
        router.add(middleware: ConcurrencyLimitMiddleware(limit: configuration.maxConcurrentRequests))
        let keys = APIKeyRing(pool: ledger.pool, refreshInterval: configuration.keyRefreshInterval)

        HealthRoutes(ledger: ledger, metrics: metrics).add(to: router)
        OpenAPIRoute.add(to: router)
        ConsoleRoute.add(to: router)
        NotificationRoutes(ledger: ledger, metrics: metrics, keys: keys, google: configuration.googlePush,
                           maxBodyBytes: configuration.maxBodyBytes).add(to: router)

        let writes = router.group("v1").add(middleware: RequireRole(roles: [.writer], keys: keys))
        CommandRoutes(ledger: ledger, metrics: metrics, maxBodyBytes: configuration.maxBodyBytes).add(to: writes)
        BatchRoute(ledger: ledger, metrics: metrics, maxBodyBytes: configuration.maxBatchBytes).add(to: writes)
        JobRoutes(ledger: ledger).addWrites(to: writes)

        let reads = router.group("v1").add(middleware: RequireRole(roles: [.reader, .writer], keys: keys))
        QueryRoutes(ledger: ledger).add(to: reads)
        EventRoutes(ledger: ledger, metrics: metrics).add(to: reads)
        AnalyticsRoutes(ledger: ledger).add(to: reads)
        JobRoutes(ledger: ledger).addReads(to: reads)
        return router
    }
}
