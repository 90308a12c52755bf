import Foundation
import CoreMetrics
import Postgres
import Prometheus
import PurchaseLedger
import Synchronization

/// The server's metrics, in a registry of its own (so several servers in one process, as in
/// tests, do not mix), written out in Prometheus' text format by `GET /metrics`.
public final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// Event-feed requests waiting for an event now (`GET /v1/events` with `wait`).
    private let feedWaiting = Atomic<Int>(0)
    /// The query counts of the ledger's read replicas at the last scrape.
    private let reads = Mutex<(replica: Int, primary: Int)>((0, 0))

    /// Empty metrics, with latency buckets from 250 µs to 10 s.
    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        self.factory = factory
    }

    /// One request answered: `http_requests_total` and the `http_request_duration_seconds` histogram.
    func request(route: String, method: String, status: Int, nanoseconds: Int64) {
        CoreMetrics.Counter(label: "http_requests_total",
                dimensions: [("route", route), ("method", method), ("status", String(status))], factory: factory)
            .increment()
        CoreMetrics.Timer(label: "http_request_duration_seconds", dimensions: [("route", route), ("method", method)],
                      factory: factory)
            .recordNanoseconds(nanoseconds)
    }

    /// One contract outcome: `ledger_outcomes_total{status, code}` (`code` empty unless rejected).
    func outcome(_ outcome: CommandOutcome) {
        CoreMetrics.Counter(label: "ledger_outcomes_total",
                dimensions: [("status", outcome.status.rawValue), ("code", outcome.error?.code.rawValue ?? "")],
                factory: factory)
            .increment()
    }

    /// One job run ended: `ledger_job_runs_total{kind, result}` (result `done`, `retrying`,
    /// `failed`, `lost`).
    public func jobRun(kind: String, result: String) {
        CoreMetrics.Counter(label: "ledger_job_runs_total", dimensions: [("kind", kind), ("result", result)], factory: factory)
            .increment()
    }

    /// One webhook delivery attempt ended: `ledger_webhook_deliveries_total{endpoint, result}`
    /// (result `done`, `retrying`, `failed`, `lost`).
    public func webhookDelivery(endpoint: Int64, result: String) {
        CoreMetrics.Counter(label: "ledger_webhook_deliveries_total",
                            dimensions: [("endpoint", String(endpoint)), ("result", result)], factory: factory)
            .increment()
    }

    /// Each endpoint's oldest undelivered delivery, read at each scrape:
    /// `ledger_webhook_oldest_undelivered_seconds{endpoint}` (0 when all is delivered).
    func recordWebhooks(_ oldest: [(endpoint: String, seconds: Double)]) {
        for (endpoint, seconds) in oldest {
            CoreMetrics.Gauge(label: "ledger_webhook_oldest_undelivered_seconds", dimensions: [("endpoint", endpoint)],
                              factory: factory)
                .record(seconds)
        }
    }

    /// One call to a store ended: `ledger_store_calls_total{store, route, status}`.
    public func storeCall(store: String, route: String, status: String) {
        CoreMetrics.Counter(label: "ledger_store_calls_total",
                            dimensions: [("store", store), ("route", route), ("status", status)], factory: factory)
            .increment()
    }

    /// The jobs table as gauges, read at each scrape: `ledger_jobs{kind, state}` (state
    /// `pending`, `running`, `failed`, `waiting`) and `ledger_jobs_oldest_pending_seconds`.
    func recordJobs(_ counts: [JobCount], oldestPending: Double?) {
        for kind in StoreJob.Kind.allCases.map(\.rawValue) {
            for state in ["pending", "running", "failed", "waiting"] {
                let count = counts.first { $0.kind == kind && $0.state == state }?.count ?? 0
                CoreMetrics.Gauge(label: "ledger_jobs", dimensions: [("kind", kind), ("state", state)], factory: factory)
                    .record(count)
            }
        }
        CoreMetrics.Gauge(label: "ledger_jobs_oldest_pending_seconds", factory: factory).record(oldestPending ?? 0)
    }

    struct JobCount: Sendable {
        var kind: String
        var state: String
        var count: Int
    }

    /// Runs a feed request, counted in `ledger_feed_clients_waiting` while it runs when it may wait.
    func waitingForEvents<T>(_ waits: Bool, _ body: () async throws -> T) async rethrows -> T {
        guard waits else { return try await body() }
        feedWaiting.add(1, ordering: .relaxed)
        defer { feedWaiting.subtract(1, ordering: .relaxed) }
        return try await body()
    }

    /// `ledger_replica_reads_total{answered_by}`: queries meant for a read replica, answered by
    /// it or by the primary (the replica behind, or out of reach), brought up to `counts`.
    func recordReads(_ counts: (replica: Int, primary: Int)) {
        let last = reads.withLock { last in
            defer { last = counts }
            return last
        }
        for (target, delta) in [("replica", counts.replica - last.replica), ("primary", counts.primary - last.primary)] where delta > 0 {
            CoreMetrics.Counter(label: "ledger_replica_reads_total", dimensions: [("answered_by", target)], factory: factory)
                .increment(by: delta)
        }
    }

    /// The text `GET /metrics` answers, with the pool's gauges read now.
    func exposition(pool: ConnectionPool) -> [UInt8] {
        let statistics = pool.statistics
        CoreMetrics.Gauge(label: "ledger_pool_connections_in_use", factory: factory).record(statistics.inUse)
        CoreMetrics.Gauge(label: "ledger_pool_connections_idle", factory: factory).record(statistics.idle)
        CoreMetrics.Gauge(label: "ledger_pool_waiting", factory: factory).record(statistics.waiting)
        CoreMetrics.Gauge(label: "ledger_feed_clients_waiting", factory: factory)
            .record(feedWaiting.load(ordering: .relaxed))
        return registry.emitToBuffer()
    }
}
