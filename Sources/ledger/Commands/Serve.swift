import ArgumentParser
import Foundation
import LedgerServer
import Logging
import PurchaseLedger
import StoreAPIs

/// `ledger serve`: the ledger over HTTP, until SIGTERM or SIGINT (then a graceful shutdown).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the ledger over HTTP: store webhooks, REST for backends, health and metrics.",
        discussion: "Each flag overrides its variable: "
            + ServerConfiguration.variables.map { "\($0.name) (\($0.meaning))" }.joined(separator: "; ")
            + ". LEDGER_GOOGLE_PUSH_SECRET has no flag, so the secret never shows in a process list.")

    @Option(help: "Address to listen on (default: LEDGER_HTTP_HOST, else 127.0.0.1).")
    var host: String?

    @Option(help: "Port (default: LEDGER_HTTP_PORT, else 8080).")
    var port: Int?

    @Option(help: "Database connections at most.")
    var poolSize: Int = 16

    @Option(help: "Largest request body in bytes (default: LEDGER_HTTP_MAX_BODY_BYTES, else 1 MiB).")
    var maxBodyBytes: Int?

    @Option(help: "Largest body of POST /v1/batch in bytes (default: LEDGER_HTTP_MAX_BATCH_BYTES, else 64 MiB).")
    var maxBatchBytes: Int?

    @Option(help: "Requests handled at once before answering 503 (default: LEDGER_HTTP_MAX_CONCURRENT, else 256).")
    var maxConcurrentRequests: Int?

    @Option(help: "Seconds before an idle keep-alive connection is closed (default: LEDGER_HTTP_IDLE_TIMEOUT, else 60).")
    var idleTimeout: Int?

    @Option(help: "Seconds a request's head and body may take to arrive before 408 (default: LEDGER_HTTP_REQUEST_TIMEOUT, else 30).")
    var requestTimeout: Int?

    @Option(help: "Seconds one analytics report may run, 0 for no limit (default: LEDGER_REPORT_TIMEOUT, else 30).")
    var reportTimeout: Double?

    @Option(help: "JWKS file of the keys Google signs Pub/Sub push tokens with (default: LEDGER_GOOGLE_PUSH_JWKS).")
    var googlePushJwks: String?

    @Option(help: "Audience of the push tokens (default: LEDGER_GOOGLE_PUSH_AUDIENCE).")
    var googlePushAudience: String?

    @Option(help: "Service account the push subscription authenticates as (default: LEDGER_GOOGLE_PUSH_EMAIL).")
    var googlePushEmail: String?

    @Option(help: "Store jobs run at once, and webhook deliveries sent at once; 0: none here, another server or `ledger jobs run` and `ledger webhooks run` run them (default: LEDGER_JOB_CONCURRENCY, else 8).")
    var jobConcurrency: Int?

    @Option(help: "trace, debug, info, notice, warning, error or critical (default: LEDGER_LOG_LEVEL, else info).")
    var logLevel: String?

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var stores: StoreOptions

    func run() async throws {
        var environment = ProcessInfo.processInfo.environment
        let flags: [(String, String?)] = [
            ("LEDGER_HTTP_HOST", host), ("LEDGER_HTTP_PORT", port.map(String.init)),
            ("LEDGER_HTTP_MAX_BODY_BYTES", maxBodyBytes.map(String.init)),
            ("LEDGER_HTTP_MAX_BATCH_BYTES", maxBatchBytes.map(String.init)),
            ("LEDGER_HTTP_MAX_CONCURRENT", maxConcurrentRequests.map(String.init)),
            ("LEDGER_HTTP_IDLE_TIMEOUT", idleTimeout.map(String.init)),
            ("LEDGER_HTTP_REQUEST_TIMEOUT", requestTimeout.map(String.init)),
            ("LEDGER_REPORT_TIMEOUT", reportTimeout.map { String($0) }),
            ("LEDGER_GOOGLE_PUSH_JWKS", googlePushJwks), ("LEDGER_GOOGLE_PUSH_AUDIENCE", googlePushAudience),
            ("LEDGER_GOOGLE_PUSH_EMAIL", googlePushEmail),
        ]
        for (name, value) in flags where value != nil { environment[name] = value }
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration(environment: environment)
        } catch {
            throw ValidationError("\(error)")
        }
        configuration.stores = try stores.configuration()
        let concurrencyText = jobConcurrency.map(String.init) ?? environment["LEDGER_JOB_CONCURRENCY"] ?? "8"
        guard let concurrency = Int(concurrencyText), (0...256).contains(concurrency) else {
            throw ValidationError("--job-concurrency (LEDGER_JOB_CONCURRENCY): expected 0 to 256, got '\(concurrencyText)'")
        }
        let levelText = logLevel ?? environment["LEDGER_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelText) else {
            throw ValidationError("--log-level: expected trace, debug, info, notice, warning, error or critical, got '\(levelText)'")
        }
        // The process's log handler is set up once by `LedgerCLI` (LedgerLog); the request log
        // is at `info`, so serve's logger has its own level, `info` unless told.
        var logger = Logger(label: "ledger.serve")
        logger.logLevel = level
        let ledger = Ledger(databaseURL: database.databaseURL, poolSize: max(1, poolSize), stores: configuration.stores,
                            reportTimeout: configuration.reportTimeout, logger: logger)
        let host = configuration.host
        // A login without ledger_store answers every store notification 500 (the stores retry):
        // say so at start, where an operator looks. An unmigrated or unreachable database is
        // /readyz's to report.
        let takesStoreNotifications = (try? await ledger.mayTakeStoreNotifications()) ?? true
        if !takesStoreNotifications {
            logger.warning("this login lacks the role ledger_store, so store notifications will be refused: GRANT ledger_store TO the server's login (README, Who can do what)")
        }
        // On a Citus cluster, what its operator should change (ledger.cluster_advice).
        for advice in (try? await ledger.clusterAdvice()) ?? [] {
            logger.warning("\(advice)")
        }
        let api: StoreAPIConfiguration
        do {
            api = try StoreAPIConfiguration.fromEnvironment(environment)
        } catch {
            throw ValidationError("\(error)")
        }
        let metrics = ServerMetrics()
        let storeWork = Task {
            await StoreWork(ledger: ledger, api: api, logger: logger, metrics: metrics, concurrency: concurrency).run()
        }
        defer { storeWork.cancel() }
        let webhookWork = Task {
            await WebhookWork(ledger: ledger, logger: logger, metrics: metrics, concurrency: concurrency).run()
        }
        defer { webhookWork.cancel() }
        // Parked notifications whose owner a command recorded without meeting them (possible
        // only where commands run on a cluster's workers): released every minute.
        let parkedSweep = Task {
            if takesStoreNotifications { await ledger.releaseOwnedParkedForever() }
        }
        defer { parkedSweep.cancel() }
        do {
            try await LedgerServer.run(ledger: ledger, configuration: configuration, logger: logger, metrics: metrics) { port in
                FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
            }
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
