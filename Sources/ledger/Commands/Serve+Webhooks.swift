import Foundation
import LedgerServer
import Logging
import PurchaseLedger
import StoreAPIs

/// What `ledger serve` does for webhooks beside HTTP (README, "Webhooks"): turns new events and
/// ended entitlements into deliveries every quarter second, and sends them at once with a job runner of
/// their own (the same job mechanism as the calls to the stores; a shorter lease, so a delivery a
/// dead server held is sent again within half a minute). Several servers share the work: each
/// endpoint is advanced by one at a time, each delivery is leased to one. Ends when cancelled.
struct WebhookWork {
    let ledger: Ledger
    let logger: Logger
    let metrics: ServerMetrics
    /// Deliveries sent at once (0: none here; another server or `ledger webhooks run` sends them).
    var concurrency = 8

    func run() async {
        guard concurrency > 0 else { return }
        let metrics = self.metrics
        let http = Webhooks.client()
        var options = JobRunner.Options()
        options.concurrency = concurrency
        options.lease = .seconds(30)
        options.only = [.webhookDelivery]
        options.onRun = { run in
            metrics.jobRun(kind: run.kind, result: run.result.rawValue)
            if let endpoint = run.endpoint { metrics.webhookDelivery(endpoint: endpoint, result: run.result.rawValue) }
        }
        let runner = JobRunner(ledger: ledger, stores: StoreAPIConfiguration(), http: http, webhooks: http,
                               options: options, logger: logger)
        let dispatcher = WebhookDispatcher(ledger: ledger, logger: logger)
        // The runner sends what the dispatcher writes at once, and looks for due retries (and
        // for deliveries other servers wrote) every 200 ms.
        let doorbell = Doorbell()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await dispatcher.runForever(onWritten: { doorbell.ring() }) }
            group.addTask { await runner.runForever(interval: .milliseconds(200), doorbell: doorbell) }
        }
        try? await http.shutdown()
    }
}
