import Hummingbird
import Logging
import Postgres
import PurchaseLedger
import ServiceLifecycle
import UnixSignals

extension LedgerServer {
    /// Runs the server until SIGTERM or SIGINT, then shuts down gracefully: stops accepting
    /// connections, lets the requests in flight finish (their commits included), and closes the
    /// pool. Logs whether the database is ready first, but starts either way (`/readyz` tells).
    public static func run(ledger: Ledger, configuration: ServerConfiguration, logger: Logger,
                           metrics: ServerMetrics = ServerMetrics(),
                           onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        do {
            if let problem = try await ledger.pool.withConnection({ try HealthRoutes.migrationProblem($0) }) {
                logger.warning("not ready", metadata: ["reason": "\(problem)"])
            }
        } catch let error as PostgresError {
            logger.warning("the database cannot be reached yet", metadata: ["error": "\(error)"])
        }
        let app = application(ledger: ledger, configuration: configuration, logger: logger, metrics: metrics,
                              onServerRunning: { port in
            logger.info("listening", metadata: ["host": "\(configuration.host)", "port": "\(port)"])
            await onServerRunning(port)
        })
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint],
                                                      logger: logger))
        do {
            try await group.run()
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        logger.info("stopped")
    }
}
