import Foundation
import Logging
import StoreAPIs

/// Runs the ledger's calls to the stores (docs/contract.md §6.2): claims due jobs (several runners,
/// in one process or many, share them: a job is leased to one runner at a time), calls the
/// store, and commits what the answer teaches in the transaction that marks the job done. A
/// transient failure (408, 429, 5xx, a timeout, a dropped connection) is retried with
/// exponential backoff and jitter, later when the store's `Retry-After` asks for more; any
/// other failure is kept with the store's answer for `ledger jobs list --state failed`.
public final class JobRunner: Sendable {
    public struct Options: Sendable {
        /// Jobs run at once.
        public var concurrency: Int = 4
        /// How long a claimed job is a runner's before another may take it (a runner that died).
        public var lease: Duration = .seconds(120)
        /// The longest wait between two attempts, unless the store asks for more.
        public var maxDelay: Duration = .seconds(3600)
        /// Failures for this long fail a job for good.
        public var giveUpAfter: Duration = .seconds(3 * 24 * 3600)
        /// Told of every run when it ends (for metrics).
        public var onRun: (@Sendable (Run) -> Void)?
        /// Only these kinds (nil: every kind this runner can run). `ledger serve` runs webhook
        /// deliveries in a runner of their own, with a shorter lease.
        public var only: Set<StoreJob.Kind>?

        public init() {}
    }

    /// One job's run, as `ledger jobs run --json` prints it.
    public struct Run: Sendable, Hashable {
        public enum Result: String, Sendable, Hashable {
            /// The call succeeded and its effect committed.
            case done
            /// A transient failure: the job runs again later.
            case retrying
            /// Failed for good (kept with the reason).
            case failed
            /// Another runner had claimed it again (this runner's lease ran out): nothing committed here.
            case lost
        }

        public var id: Int64
        public var kind: String
        public var attempt: Int
        public var result: Result
        /// The effect's status (recorded, duplicate, parked, done).
        public var outcome: String?
        public var paymentSeq: String?
        /// Why it failed or is retried: the store's status and code, or the refusal.
        public var error: String?
        /// A webhook delivery's endpoint.
        public var endpoint: Int64?
    }

    let ledger: Ledger
    let stores: StoreAPIConfiguration
    let google: GooglePlayClient?
    /// One client per accepted bundle id (each JWT names its app).
    let apple: [String: AppStoreServerClient]
    /// The client webhook deliveries are sent with (nil: this runner sends none).
    let webhooks: StoreHTTPClient?
    let webhookTargets = WebhookDelivery.Targets()
    let options: Options
    let logger: Logger

    /// A runner for the stores `stores` configures, over `http` (shared with the reconciliations;
    /// its owner shuts it down), and for webhook deliveries over `webhooks` when given. Apple's
    /// clients are made for the ledger's accepted bundle ids.
    public init(ledger: Ledger, stores: StoreAPIConfiguration, http: StoreHTTPClient, webhooks: StoreHTTPClient? = nil,
                options: Options = Options(), logger: Logger = Logger(label: "ledger.jobs")) {
        self.ledger = ledger
        self.stores = stores
        self.google = stores.google?.client(http: http)
        var apple: [String: AppStoreServerClient] = [:]
        if let configured = stores.apple {
            for bundle in ledger.stores.appleBundleIds { apple[bundle] = configured.client(bundleId: bundle, http: http) }
        }
        self.apple = apple
        self.webhooks = webhooks
        self.options = options
        self.logger = logger
    }

    /// The kinds this runner can run: those of the stores it can reach, and webhook deliveries
    /// when it has their client (of ``Options/only`` when set).
    public var kinds: Set<StoreJob.Kind> {
        var kinds: Set<StoreJob.Kind> = []
        if google != nil { kinds.formUnion([.googleSubscription, .googleProduct, .googleCheck, .googleAcknowledge]) }
        if !apple.isEmpty, stores.appleConsumptionAnswers { kinds.insert(.appleConsumption) }
        if webhooks != nil { kinds.insert(.webhookDelivery) }
        return options.only.map { kinds.intersection($0) } ?? kinds
    }

    /// Claims and runs the jobs due now, `concurrency` at once, until none is due and none is
    /// running. Free slots are filled as soon as half of them are free (or none runs), with one
    /// claim for them all, so one slow store answer holds up only its own slot, not a batch, and
    /// a backlog costs a claim per half of the slots rather than per job (a claim is a third of
    /// a webhook delivery's time on the database; BENCHMARKS.md). A job is mostly waiting for
    /// the store, so the rate is about `concurrency` over the store's answer time.
    public func runDue() async throws -> [Run] {
        guard !kinds.isEmpty else { return [] }
        let kinds = self.kinds
        let slots = max(1, options.concurrency)
        let refill = max(1, slots / 2)
        let (runs, failure) = await withTaskGroup(of: Run.self) { group -> ([Run], (any Error)?) in
            var runs: [Run] = []
            var running = 0
            while !Task.isCancelled {
                if running == 0 || slots - running >= refill {
                    let claimed: [ClaimedJob]
                    do {
                        claimed = try await ledger.claimJobs(limit: slots - running, lease: options.lease, kinds: kinds)
                    } catch {
                        // The running jobs end first (each commits its effect or leaves its lease).
                        for await run in group { runs.append(run) }
                        return (runs, error)
                    }
                    for job in claimed { group.addTask { await self.run(job) } }
                    running += claimed.count
                    if claimed.isEmpty, running == 0 { break }
                    if !claimed.isEmpty, slots - running >= refill { continue }
                }
                guard let run = await group.next() else { break }
                runs.append(run)
                running -= 1
            }
            for await run in group { runs.append(run) }
            return (runs, nil)
        }
        if let failure { throw failure }
        return runs.sorted { $0.id < $1.id }
    }

    /// `ledger jobs run --until-idle`: runs jobs until none of its kinds is pending (waiting out
    /// retry delays), or until `timeout`, leaving the rest for later.
    public func runUntilIdle(timeout: Duration) async throws -> [Run] {
        let deadline = ContinuousClock.now + timeout
        var runs: [Run] = []
        while ContinuousClock.now < deadline, !Task.isCancelled {
            runs += try await runDue()
            guard let due = try await ledger.nextJobDue(kinds: kinds) else { break }
            let wait = max(0.05, min(due.timeIntervalSinceNow, 1.0))
            try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
        return runs
    }

    /// `ledger serve`: runs jobs until the task is cancelled, looking for due ones every
    /// `interval` when idle, and at once when `doorbell` rings. A database error is logged and
    /// retried after the interval.
    public func runForever(interval: Duration = .seconds(1), doorbell: Doorbell? = nil) async {
        while !Task.isCancelled {
            do {
                let runs = try await runDue()
                if runs.isEmpty {
                    if let doorbell { await doorbell.wait(timeout: interval) } else { try await Task.sleep(for: interval) }
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("job runner: \(error)")
                try? await Task.sleep(for: interval)
            }
        }
    }

    // MARK: One job

    /// A failure for good that is not the store's: an answer the ledger cannot use, a purpose gone.
    struct PermanentFailure: Error, CustomStringConvertible {
        var description: String
    }

    func run(_ job: ClaimedJob) async -> Run {
        var run = Run(id: job.id, kind: job.kind.rawValue, attempt: job.attempt, result: .done)
        if job.kind == .webhookDelivery { run.endpoint = job.args["endpoint"].flatMap { Int64($0) } }
        do {
            let (effect, follow) = try await call(job)
            let finished = try await ledger.finishJob(job, effect: effect, follow: follow)
            if finished.status == "rejected" {
                run.result = .failed
                run.error = "\(finished.code ?? "REJECTED"): \(finished.message ?? "")"
            } else if finished.status == "duplicate", finished.message != nil {
                run.result = .lost
            } else {
                run.outcome = finished.status
                run.paymentSeq = finished.paymentSeq
            }
        } catch let error as StoreAPIError where error.isRetryable {
            let asked = Duration.milliseconds(Int(((error.retryAfter ?? 0) * 1000).rounded(.up)))
            let delay = max(Self.backoff(attempt: job.attempt, max: options.maxDelay), asked)
            run.error = error.description
            run.result = await postpone(job, delay: delay, status: error.status, code: error.storeCode, error: error.description)
        } catch let error as StoreAPIError {
            run.result = .failed
            run.error = error.description
            await fail(job, status: error.status, code: error.storeCode, error: error.description)
        } catch let error as PermanentFailure {
            run.result = .failed
            run.error = error.description
            await fail(job, status: nil, code: nil, error: error.description)
        } catch {
            // The database (or this process) failed: the job's lease runs out and it runs again.
            run.result = .retrying
            run.error = "\(error)"
            logger.warning("job \(job.id) (\(job.kind.rawValue)): \(error)")
        }
        logger.debug("job \(job.id) \(job.kind.rawValue) attempt \(job.attempt): \(run.result.rawValue)")
        options.onRun?(run)
        return run
    }

    private func postpone(_ job: ClaimedJob, delay: Duration, status: Int?, code: String?, error: String) async -> Run.Result {
        do {
            let state = try await ledger.postponeJob(job, delay: delay, giveUpAfter: options.giveUpAfter,
                                                     status: status, code: code, error: error)
            return state == .failed ? .failed : .retrying
        } catch {
            logger.warning("job \(job.id): could not postpone: \(error)")
            return .retrying
        }
    }

    private func fail(_ job: ClaimedJob, status: Int?, code: String?, error: String) async {
        do {
            try await ledger.failJob(job, status: status, code: code, error: error)
        } catch {
            logger.warning("job \(job.id): could not mark failed: \(error)")
        }
    }

    /// About a second before the first retry, doubling, at most `max`; each drawn from ±25 % so
    /// that runners that failed together do not come back together.
    static func backoff(attempt: Int, max: Duration) -> Duration {
        let base = min(Double(max.components.seconds), pow(2, Double(Swift.max(0, attempt - 1))))
        return .milliseconds(Int(base * Double.random(in: 0.75...1.25) * 1000))
    }

    /// The store call of one job: what it teaches (a notification for `ledger.notify`) and the
    /// jobs it leads to.
    func call(_ job: ClaimedJob) async throws -> (StoreNotification?, [StoreJob]) {
        switch job.kind {
        case .googleSubscription, .googleProduct, .googleCheck, .googleAcknowledge:
            guard let google else { throw PermanentFailure(description: "Google's API is not configured") }
            guard let token = job.secret else { throw PermanentFailure(description: "the job has no purchase token") }
            let package = job.args["packageName"] ?? ""
            switch job.kind {
            case .googleSubscription:
                let answer = try await google.subscriptionV2(packageName: package, token: token)
                return try GoogleAnswers.subscription(answer, job: job, token: token)
            case .googleProduct:
                let answer = try await google.productV2(packageName: package, token: token)
                return try GoogleAnswers.product(answer, job: job, token: token)
            case .googleCheck:
                return (nil, try await GoogleAnswers.check(job: job, token: token, google: google))
            default:
                let product = job.args["productId"] ?? ""
                if job.args["type"] == "product" {
                    try await google.acknowledgeProduct(packageName: package, productId: product, token: token)
                } else {
                    try await google.acknowledgeSubscription(packageName: package, subscriptionId: product, token: token)
                }
                return (nil, [])
            }
        case .webhookDelivery:
            try await WebhookDelivery.send(job: job, ledger: ledger, client: webhooks, targets: webhookTargets)
            return (nil, [])
        case .appleConsumption:
            let bundle = job.args["bundleId"] ?? ""
            guard let client = apple[bundle] ?? (apple.count == 1 ? apple.values.first : nil) else {
                throw PermanentFailure(description: "no App Store Server API client for bundle id \(bundle) (LEDGER_APPLE_BUNDLE_IDS)")
            }
            try await ConsumptionAnswer.send(job: job, ledger: ledger, stores: stores, apple: client)
            return (nil, [])
        }
    }
}
