import Foundation
import CoreMetrics
import Postgres
import Prometheus
import PurchaseLedger

/// The server's metrics, in a registry of its own (so several servers in one process, as in
/// tests, do not mix), written out in Prometheus' text format by `GET /metrics`.
public final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

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

    /// The text `GET /metrics` answers, with the pool's gauges read now.
    func exposition(pool: ConnectionPool) -> [UInt8] {
        let statistics = pool.statistics
        CoreMetrics.Gauge(label: "ledger_pool_connections_in_use", factory: factory).record(statistics.inUse)
        CoreMetrics.Gauge(label: "ledger_pool_connections_idle", factory: factory).record(statistics.idle)
        CoreMetrics.Gauge(label: "ledger_pool_waiting", factory: factory).record(statistics.waiting)
        return registry.emitToBuffer()
    }
}
