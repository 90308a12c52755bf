import Foundation
import LedgerServer
import Logging
import PurchaseLedger
import StoreAPIs

/// What `ledger serve` does for the stores beside HTTP (docs/contract.md §6.2–§6.4): runs jobs all
/// the time, and every hour reconciles each configured store over the time since its last
/// reconciliation, with an overlap (what was applied already is a duplicate). Ends when cancelled.
struct StoreWork {
    let ledger: Ledger
    let api: StoreAPIConfiguration
    let logger: Logger
    let metrics: ServerMetrics
    /// Jobs run at once: each mostly waits (for the store's answer, for its commit), so more than
    /// the cores. 0: this server runs none (it only takes the stores' notifications, beside a worker that runs them);
    /// it still reconciles.
    var concurrency = 8
    var interval: Duration = .seconds(3600)
    /// Each reconciliation reaches back this much before the previous one's end.
    var overlap: TimeInterval = 600
    /// How far back the first one of a process reaches.
    var firstWindow: TimeInterval = 24 * 3600

    func run() async {
        guard api.google != nil || api.apple != nil else { return }
        let metrics = self.metrics
        let http = StoreHTTPClient(logger: logger) { store, route, status in
            metrics.storeCall(store: store, route: route, status: status)
        }
        var options = JobRunner.Options()
        options.concurrency = concurrency
        options.onRun = { run in metrics.jobRun(kind: run.kind, result: run.result.rawValue) }
        let runner = JobRunner(ledger: ledger, stores: api, http: http, options: options, logger: logger)
        let jobs = concurrency > 0 ? "running jobs of kinds \(runner.kinds.map(\.rawValue).sorted().joined(separator: ", ")), \(concurrency) at once"
            : "running no jobs (LEDGER_JOB_CONCURRENCY=0: another server or `ledger jobs run` runs them)"
        logger.info("asking the stores: \([api.google != nil ? "Google Play" : nil, api.apple != nil ? "App Store" : nil].compactMap { $0 }.joined(separator: " and ")); \(jobs)")
        await withTaskGroup(of: Void.self) { group in
            if concurrency > 0 { group.addTask { await runner.runForever() } }
            group.addTask { await reconcileHourly(http: http) }
        }
        try? await http.shutdown()
    }

    private func reconcileHourly(http: StoreHTTPClient) async {
        let reconciler = Reconciler(ledger: ledger, stores: api, http: http, logger: logger)
        var since = Date().addingTimeInterval(-firstWindow)
        while !Task.isCancelled {
            let until = Date()
            for store in ["google", "apple"] {
                do {
                    let outcomes: [CommandOutcome]
                    switch store {
                    case "google" where api.google != nil: outcomes = try await reconciler.google(since: since, until: until)
                    case "apple" where api.apple != nil: outcomes = try await reconciler.apple(since: since, until: until)
                    default: continue
                    }
                    let applied = outcomes.filter { $0.status != .duplicate }.count
                    logger.info("reconciled \(store): \(outcomes.count) from the store, \(applied) not seen before")
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("reconcile \(store): \(error)")
                }
            }
            since = until.addingTimeInterval(-overlap)
            try? await Task.sleep(for: interval)
        }
    }
}
