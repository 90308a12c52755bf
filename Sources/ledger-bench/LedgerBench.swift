import LedgerDemo
import ArgumentParser
import Foundation
import Postgres
import PurchaseLedger

/// `ledger-bench`: every ledger path beside the same server's own baseline, measured in the
/// same run, as ratios. Prints figures; never fails on a missed target.
@main
struct LedgerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-bench",
        abstract: "Measure the ledger's paths against the same PostgreSQL server's own baselines.",
        discussion: "Creates a scratch database on the server (dropped afterwards unless --keep) and prints one table.")

    @Option(name: .customLong("database-url"), help: "The server (any database on it). Default: $DATABASE_URL.")
    var databaseURL: String?

    @Option(help: "How many NDJSON lines the demo generator writes for the ingest, query and rebuild figures.")
    var events = 1_000_000

    @Option(help: "Runs of each throughput figure; the table shows medians.")
    var runs = 3

    @Option(help: "Seconds per throughput run.")
    var seconds = 5

    @Option(help: "Concurrent clients for the multi-client figures.")
    var clients = 8

    @Option(help: "Keep-alive connections of the HTTP figures (`ledger serve` on loopback).")
    var httpConnections = 64

    @Option(help: "The pgbench binary.")
    var pgbench = "/usr/lib/postgresql/15/bin/pgbench"

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Flag(help: "Measure only the HTTP figures (ledger serve against the library).")
    var httpOnly = false

    @Flag(help: "Measure only the record figures (library at 1 and --clients callers beside the INSERT baseline), say to compare LEDGER_GROUP_COMMIT_BATCHES settings.")
    var recordOnly = false

    @Option(help: "The seed that draws the users of the query figures. Default: a new one each run, printed, so that a run does not find an earlier run's users in cache; give the printed one to look up the same users again.")
    var seed: UInt64?

    @Flag(help: "Measure only the store jobs (issue #30): Google renewal notifications through POST /notifications/google, the Play Developer API asked (shared/tools/fake-store-api on loopback), against the same notifications without the API.")
    var storeJobs = false

    @Option(help: "Notifications per run of --store-jobs.")
    var notifications = 10_000

    @Option(help: "Jobs the server of --store-jobs runs at once (LEDGER_JOB_CONCURRENCY).")
    var jobConcurrency = 8

    @Option(help: "The store fake of --store-jobs. Default: $FAKE_STORE_API, else shared/tools/fake-store-api beside the repository.")
    var fakeStoreApi: String?

    @Flag(help: "Measure only the webhooks: `ledger ingest` of --events demo lines while `ledger serve` delivers every event to a fast receiver on loopback, beside the same ingest with no endpoint; deliveries/s and the lag from commit to arrival.")
    var webhooks = false

    @Flag(help: "Keep the scratch database.")
    var keep = false

    @Option(help: ArgumentHelp("Measure only the query and analytics figures, on this existing ledger database of the server (neither migrated nor dropped; `--runs` rounds of 2,000 lookups, each beside its primary-key baseline).", valueName: "database"))
    var queriesOn: String?

    func run() async throws {
        let server = Ledger.configuration(databaseURL)
        if let queriesOn {
            let conninfo = try ConnectionConfiguration(server.conninfo, database: queriesOn).keywordConninfo()
            let figures = try queryFigures(conninfo: conninfo)
            printReport(figures, events: try LedgerPaths(conninfo: conninfo).logEvents())
            return
        }
        if storeJobs {
            printReport(try storeJobFigures(serverConninfo: server.conninfo), events: 0)
            return
        }
        if webhooks {
            printReport(try await webhookFigures(serverConninfo: server.conninfo), events: events)
            return
        }
        let name = "ledger_bench_\(getpid())"
        let admin = try Connection.connect(ConnectionConfiguration(server.conninfo, database: "postgres"))
        try admin.executeScript(unsafeSQL: "CREATE DATABASE \(name)")
        defer {
            if !keep { _ = try? admin.executeScript(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
            admin.close()
        }
        let conninfo = try ConnectionConfiguration(server.conninfo, database: name).keywordConninfo()
        try Connection.connect(ConnectionConfiguration(conninfo)).migrateAndClose()
        var figures: [Figure] = []
        let baselines = Baselines(conninfo: conninfo, pgbench: pgbench)
        let paths = LedgerPaths(conninfo: conninfo)

        if httpOnly {
            let figures = try await httpFigures(paths: paths, conninfo: conninfo)
            printReport(figures, events: 0)
            return
        }
        for c in [1, clients] {
            step("single-row INSERT baseline and library record, \(c) client(s)")
            var base: [Double] = [], mine: [Double] = []
            for r in 0..<runs {
                base.append(try baselines.insertTPS(clients: c, seconds: seconds))
                mine.append(try await paths.recordRate(clients: c, seconds: Double(seconds), tag: "r\(c)-\(r)"))
            }
            figures.append(Figure(path: "record a purchase (library)", name: "events/s at \(c) client\(c == 1 ? "" : "s")",
                                  unit: "events/s", value: Measure.median(mine), baselineName: "INSERT TPS (pgbench -M prepared)",
                                  baseline: Measure.median(base), goal: .ratioAtLeast(c == 1 ? 0.5 : 1.0)))
        }
        if recordOnly {
            printReport(figures, events: 0)
            return
        }
        step("consume through the library, \(clients) clients")
        var consumes: [Double] = [], base: [Double] = []
        for r in 0..<runs {
            base.append(try baselines.insertTPS(clients: clients, seconds: seconds))
            consumes.append(try await paths.consumeRate(clients: clients, seconds: Double(seconds),
                                                        perClient: max(200, 600 * seconds), tag: "c\(r)"))
        }
        figures.append(Figure(path: "consume (library)", name: "consumes/s at \(clients) clients", unit: "consumes/s",
                              value: Measure.median(consumes), baselineName: "INSERT TPS (pgbench -M prepared)",
                              baseline: Measure.median(base), goal: .ratioAtLeast(1.0)))

        figures += try await httpFigures(paths: paths, conninfo: conninfo)

        step("writing \(events) demo lines")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-\(getpid()).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let (lines, users) = try writeDemo(file)
        step("COPY baseline (\(lines) rows) and `ledger ingest` of the file")
        let copyRate = Measure.median(try (0..<runs).map { _ in try baselines.copyRowsPerSecond(rows: lines) })
        let ingest = try paths.ingest(file: file, lines: lines, ledgerBinary: ledgerBinary())
        figures.append(Figure(path: "ledger ingest (results printed)", name: "lines/s, \(lines) lines", unit: "lines/s",
                              value: ingest.perSecond, baselineName: "COPY rows/s, same count", baseline: copyRate,
                              goal: .ratioAtLeast(0.25)))
        figures.append(Figure(path: "ledger ingest", name: "peak RSS", unit: "MB", value: ingest.peakMB,
                              baselineName: nil, baseline: nil, goal: .valueAtMost(200)))

        step("query latencies for random users")
        let pk = try baselines.primaryKeyLatencies(lookups: 2000)
        let queries = try paths.queryLatencies(users: (0..<users).map(DemoGenerator.userId), lookups: 2000, at: DemoGenerator.clock.date,
                                               seed: querySeed())
        step("query latencies: \(blocksPerUser(queries)) blocks per user read into shared buffers")
        figures += queryFigures(unconsumed: queries.unconsumed, subscriptions: queries.subscriptions, primaryKey: pk)
        step("`ledger rebuild` of every projection and its CTAS baseline")
        var ctas: [Double] = [], rebuilds: [Double] = [], logEvents = 0
        for _ in 0..<runs {
            let copy = try baselines.ctasRowsPerSecond()
            let rebuild = try paths.rebuildRate()
            ctas.append(copy.perSecond)
            rebuilds.append(rebuild.perSecond)
            logEvents = rebuild.events
        }
        figures.append(Figure(path: "ledger rebuild (all projections)", name: "events/s, \(logEvents) events", unit: "events/s",
                              value: Measure.median(rebuilds), baselineName: "CTAS rows/s over the log",
                              baseline: Measure.median(ctas), goal: .ratioAtLeast(0.3)))

        figures += try analyticsFigures(paths)
        printReport(figures, events: logEvents)
    }

    /// The store jobs' figures: `runs` rounds, each the notifications without the API, then with
    /// it (jobs run by the server while the pushes arrive, then the wait for the last); medians of
    /// the rates, the lag's quantiles over every round's jobs.
    private func storeJobFigures(serverConninfo: String) throws -> [Figure] {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let fake = fakeStoreApi ?? ProcessInfo.processInfo.environment["FAKE_STORE_API"]
            ?? repository.deletingLastPathComponent().appendingPathComponent("shared/tools/fake-store-api").path
        let paths = StoreJobPaths(serverConninfo: serverConninfo, ledgerBinary: ledgerBinary(), fakeTool: fake,
                                  connections: httpConnections, jobConcurrency: jobConcurrency)
        var without: [Double] = [], written: [Double] = [], with: [Double] = [], jobs: [Double] = [], drains: [Double] = []
        var lags: [Double] = []
        try paths.withFake(tokens: notifications) { baseURL, keys in
            for r in 0..<max(1, runs) {
                step("round \(r + 1): \(notifications) Google notifications to a server that does not ask the Play Developer API")
                let plain = try paths.measure(count: notifications, googleAPI: nil, tag: "plain\(r)", progress: step)
                step("round \(r + 1): the same to a server that writes their jobs and runs none")
                let writes = try paths.measure(count: notifications, googleAPI: (baseURL, keys), runsJobs: false, tag: "written\(r)", progress: step)
                step("round \(r + 1): the same to a server that asks Google (the store fake at \(baseURL)) while they arrive")
                let asked = try paths.measure(count: notifications, googleAPI: (baseURL, keys), tag: "asked\(r)", progress: step)
                step(String(format: "round %d: %.0f, %.0f and %.0f notifications/s, %.0f jobs/s, lag p50 %.2f s p99 %.2f s, drained %.1f s after the last push",
                            r + 1, plain.postsPerSecond, writes.postsPerSecond, asked.postsPerSecond, asked.jobsPerSecond,
                            Measure.quantile(asked.lags, 0.5), Measure.quantile(asked.lags, 0.99), asked.drainSeconds))
                without.append(plain.postsPerSecond)
                written.append(writes.postsPerSecond)
                with.append(asked.postsPerSecond)
                jobs.append(asked.jobsPerSecond)
                drains.append(asked.drainSeconds)
                lags += asked.lags
            }
        }
        let count = "\(notifications) notifications, \(httpConnections) connections"
        return [
            Figure(path: "POST /notifications/google, jobs written", name: "notifications/s, \(count)", unit: "notifications/s",
                   value: Measure.median(written), baselineName: "the same, API not configured", baseline: Measure.median(without),
                   goal: .reference),
            Figure(path: "POST /notifications/google, jobs run beside", name: "notifications/s, \(count)", unit: "notifications/s",
                   value: Measure.median(with), baselineName: "the same, API not configured", baseline: Measure.median(without),
                   goal: .reference),
            Figure(path: "store jobs (subscriptionsv2 → payment)", name: "jobs/s, \(jobConcurrency) at once", unit: "jobs/s",
                   value: Measure.median(jobs), baselineName: nil, baseline: nil, goal: .reference),
            Figure(path: "store jobs", name: "lag notification → payment, p50", unit: "s",
                   value: Measure.quantile(lags, 0.5), baselineName: nil, baseline: nil, goal: .reference),
            Figure(path: "store jobs", name: "lag notification → payment, p99", unit: "s",
                   value: Measure.quantile(lags, 0.99), baselineName: nil, baseline: nil, goal: .reference),
            Figure(path: "store jobs", name: "drain after the last push", unit: "s",
                   value: Measure.median(drains), baselineName: nil, baseline: nil, goal: .reference),
        ]
    }

    /// Prints the figures as the one table (or JSON with `--json`); `events` is the log's size
    /// the query and rebuild figures were measured at (0 when none were).
    private func printReport(_ figures: [Figure], events: Int) {
        print(json ? Report.json(figures, events: events) : Report.table(figures, events: events, runs: runs))
    }

    /// The query latencies and the 30-day analytics on an existing ledger: `runs` rounds, each a
    /// primary-key baseline then the ledger's queries for random users of that ledger; the
    /// quantiles are over all rounds' lookups, and each round's ratios are printed as it ends.
    private func queryFigures(conninfo: String) throws -> [Figure] {
        let baselines = Baselines(conninfo: conninfo, pgbench: pgbench)
        let paths = LedgerPaths(conninfo: conninfo)
        let users = try paths.ledgerUsers()
        let seed = querySeed()
        var pk: [Double] = [], unconsumed: [Double] = [], subscriptions: [Double] = []
        for r in 0..<max(1, runs) {
            step("round \(r + 1): primary-key baseline and queries for random users of \(users.count)")
            let base = try baselines.primaryKeyLatencies(lookups: 2000)
            let q = try paths.queryLatencies(users: users, lookups: 2000, at: DemoGenerator.clock.date, seed: seed &+ UInt64(r))
            let ratios = [(q.unconsumed, "unconsumed"), (q.subscriptions, "subscriptions")].map { values, label in
                String(format: "%@ p50 %.2f× p99 %.2f×", label, Measure.quantile(values, 0.5) / Measure.quantile(base, 0.5),
                       Measure.quantile(values, 0.99) / Measure.quantile(base, 0.99))
            }
            step("round \(r + 1): " + ratios.joined(separator: ", ") + "; \(blocksPerUser(q)) blocks per user read into shared buffers")
            pk += base
            unconsumed += q.unconsumed
            subscriptions += q.subscriptions
        }
        try baselines.dropPrimaryKeyTable()
        return queryFigures(unconsumed: unconsumed, subscriptions: subscriptions, primaryKey: pk)
            + (try analyticsFigures(paths))
    }

    /// The query latencies' p50 and p99 beside the primary-key SELECT's (targets: 1.5× and 2×).
    private func queryFigures(unconsumed: [Double], subscriptions: [Double], primaryKey pk: [Double]) -> [Figure] {
        [("unconsumed", unconsumed), ("subscriptions --at", subscriptions)].flatMap { label, values in
            [(0.5, "p50"), (0.99, "p99")].map { q, tag in
                Figure(path: "\(label) (library)", name: "\(tag) latency", unit: "ms",
                       value: Measure.quantile(values, q), baselineName: "primary-key SELECT \(tag)",
                       baseline: Measure.quantile(pk, q), goal: .ratioAtMost(q == 0.5 ? 1.5 : 2))
            }
        }
    }

    /// The 30-day analytics, by day, `runs` times: medians (targets: revenue 2 s, subscribers 1 s).
    private func analyticsFigures(_ paths: LedgerPaths) throws -> [Figure] {
        step("30-day analytics revenue and subscribers")
        let reports = try (0..<max(1, runs)).map { _ in try paths.analyticsSeconds() }
        return [("revenue", reports.map(\.revenue), 2.0), ("subscribers", reports.map(\.subscribers), 1.0)].map { label, values, limit in
            Figure(path: "analytics \(label), 30 days by day", name: "seconds", unit: "s",
                   value: Measure.median(values), baselineName: nil, baseline: nil, goal: .valueAtMost(limit))
        }
    }

    /// `ledger serve` on loopback against the library in the same run: record and consume
    /// throughput over `httpConnections` keep-alive connections beside the library's with as many
    /// callers and the same pool; the latency HTTP adds to one call at a time; errors; and a
    /// SIGTERM in the middle of the load, after which every acknowledged purchase must be in the log.
    private func httpFigures(paths: LedgerPaths, conninfo: String) async throws -> [Figure] {
        let http = HTTPPaths(conninfo: conninfo, ledgerBinary: ledgerBinary(), poolSize: clients)
        let c = httpConnections
        step("HTTP (ledger serve, \(c) keep-alive connections, pool of \(clients)) and the library with \(c) callers")
        var httpRecord: [Double] = [], libRecord: [Double] = [], httpConsume: [Double] = [], libConsume: [Double] = []
        var overhead: [Double] = [], httpP50: [Double] = [], httpP99: [Double] = []
        var failures = 0, firstFailure: String?
        let perClient = max(100, 3000 * seconds / c)
        for r in 0..<runs {
            libRecord.append(try await paths.recordRate(clients: c, seconds: Double(seconds), tag: "lr\(r)", poolSize: clients))
            libConsume.append(try await paths.consumeRate(clients: c, seconds: Double(seconds), perClient: perClient,
                                                          tag: "lc\(r)", poolSize: clients))
            let library = Measure.median(try await http.libraryRecordLatencies(calls: 300, tag: "l1-\(r)"))
            try http.withServer { server in
                let record = try http.recordRate(server, connections: c, seconds: Double(seconds), tag: "hr\(r)")
                let consume = try http.consumeRate(server, connections: c, seconds: Double(seconds), perClient: perClient, tag: "hc\(r)")
                let single = HTTPLoad.run(port: server.port, connections: 1, seconds: 60, limit: 300) { connection, _, n in
                    let answer = try connection.post("/v1/purchases", key: server.key, json: purchaseJSON("h1-\(r)-\(n)", user: n))
                    guard answer.status == 200 else { throw BenchError("POST /v1/purchases answered \(answer.status)") }
                }
                for load in [record, consume, single] where load.failures > 0 {
                    failures += load.failures
                    firstFailure = firstFailure ?? load.firstFailure
                }
                httpRecord.append(record.perSecond)
                httpConsume.append(consume.perSecond)
                httpP50.append(Measure.quantile(record.latencies, 0.5))
                httpP99.append(Measure.quantile(record.latencies, 0.99))
                overhead.append(Measure.median(single.latencies) - library)
            }
        }
        if let firstFailure { step("HTTP failures: \(failures), the first: \(firstFailure)") }
        step("SIGTERM to ledger serve under \(c) connections of load")
        let stop = try http.sigtermUnderLoad(connections: c, after: min(Double(seconds), 2), tag: "term")
        guard stop.exitStatus == 0 else { throw BenchError("ledger serve exited \(stop.exitStatus) after SIGTERM") }
        let library = "library, \(c) callers, pool \(clients)"
        return [
            Figure(path: "record a purchase (HTTP)", name: "requests/s, \(c) connections", unit: "requests/s",
                   value: Measure.median(httpRecord), baselineName: library, baseline: Measure.median(libRecord),
                   goal: .ratioAtLeast(0.8)),
            Figure(path: "consume (HTTP)", name: "requests/s, \(c) connections", unit: "requests/s",
                   value: Measure.median(httpConsume), baselineName: library, baseline: Measure.median(libConsume),
                   goal: .ratioAtLeast(0.8)),
            Figure(path: "record a purchase (HTTP)", name: "p50 / p99 latency, \(c) connections", unit: "ms",
                   value: Measure.median(httpP50), baselineName: "p99", baseline: Measure.median(httpP99), goal: .reference),
            Figure(path: "record a purchase (HTTP), one at a time", name: "p50 added to the library call", unit: "ms",
                   value: Measure.median(overhead), baselineName: nil, baseline: nil, goal: .valueAtMost(0.3)),
            Figure(path: "HTTP load", name: "failed requests", unit: "requests", value: Double(failures),
                   baselineName: nil, baseline: nil, goal: .valueAtMost(0)),
            Figure(path: "SIGTERM under HTTP load", name: "acknowledged (of \(stop.acknowledged)) missing from the log",
                   unit: "purchases", value: Double(stop.lost), baselineName: nil, baseline: nil, goal: .valueAtMost(0)),
        ]
    }

    /// The lines a second of the webhooks' paced measure: a steady load well under what the
    /// deliveries sustain beside it (about 1,000 a second on 2 cores; BENCHMARKS.md).
    static let pacedRate = 200.0

    /// The webhooks' figures: `runs` rounds, each an ingest with no endpoint, then one delivering
    /// to a receiver (the order alternates between rounds); medians of the rates, the lag's
    /// quantiles over every round's events; then the lag at a steady ``pacedRate``.
    private func webhookFigures(serverConninfo: String) async throws -> [Figure] {
        step("writing \(events) demo lines")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-webhooks-\(getpid()).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let (lines, _) = try writeDemo(file)
        let paths = WebhookPaths(serverConninfo: serverConninfo, ledgerBinary: ledgerBinary(), deliveryConcurrency: jobConcurrency)
        let runs = max(1, self.runs)
        let rounds = try await WebhookPaths.withReceiver { receiver in
            var without: [Double] = [], with: [Double] = [], rates: [Double] = [], lags: [Double] = [], drains: [Double] = []
            for r in 0..<runs {
                for delivering in r % 2 == 0 ? [false, true] : [true, false] {
                    step("round \(r + 1): ingest of \(lines) lines \(delivering ? "delivering every event to \(receiver.url)" : "with no endpoint")")
                    let run = try await paths.measure(file: file, lines: lines, receiver: delivering ? receiver : nil,
                                                      tag: "\(delivering ? "with" : "without")\(r)") { self.step($0) }
                    if delivering {
                        with.append(run.ingestPerSecond)
                        rates.append(run.deliveriesPerSecond)
                        drains.append(run.drainSeconds)
                        lags += run.lags
                        self.step(String(format: "round %d: ingest %.0f lines/s, %.0f deliveries/s, lag p50 %.2f s p99 %.2f s, drained %.1f s after the ingest",
                                         r + 1, run.ingestPerSecond, run.deliveriesPerSecond, Measure.quantile(run.lags, 0.5),
                                         Measure.quantile(run.lags, 0.99), run.drainSeconds))
                    } else {
                        without.append(run.ingestPerSecond)
                        self.step(String(format: "round %d: ingest %.0f lines/s with no endpoint", r + 1, run.ingestPerSecond))
                    }
                }
            }
            let pacedLines = min(lines, Int(Self.pacedRate * 30))
            step("the lag at a steady \(Int(Self.pacedRate)) lines/s: \(pacedLines) lines, each committed as it comes")
            let paced = try await paths.measurePaced(file: file, lines: pacedLines, rate: Self.pacedRate, receiver: receiver) { self.step($0) }
            self.step(String(format: "paced: %.0f lines/s, lag p50 %.3f s p99 %.3f s over %d events", paced.ingestPerSecond,
                             Measure.quantile(paced.lags, 0.5), Measure.quantile(paced.lags, 0.99), paced.lags.count))
            return (without, with, rates, lags, drains, paced.lags)
        }
        let (without, with, rates, lags, drains, pacedLags) = rounds
        return [
            Figure(path: "ledger ingest, every event delivered", name: "lines/s, \(lines) lines", unit: "lines/s",
                   value: Measure.median(with), baselineName: "the same ingest, no endpoint", baseline: Measure.median(without),
                   goal: .reference),
            Figure(path: "webhook deliveries (fast receiver)", name: "deliveries/s, \(jobConcurrency) at once", unit: "deliveries/s",
                   value: Measure.median(rates), baselineName: nil, baseline: nil, goal: .reference),
            Figure(path: "webhook lag, commit to arrival", name: "p50 over \(lags.count) events", unit: "s",
                   value: Measure.quantile(lags, 0.5), baselineName: nil, baseline: nil, goal: .reference),
            Figure(path: "webhook lag, commit to arrival", name: "p99 over \(lags.count) events", unit: "s",
                   value: Measure.quantile(lags, 0.99), baselineName: nil, baseline: nil, goal: .reference),
            Figure(path: "webhook drain after the ingest", name: "seconds", unit: "s",
                   value: Measure.median(drains), baselineName: nil, baseline: nil, goal: .reference),
            Figure(path: "webhook lag at \(Int(Self.pacedRate)) lines/s", name: "p50 over \(pacedLags.count) events", unit: "s",
                   value: Measure.quantile(pacedLags, 0.5), baselineName: nil, baseline: nil, goal: .reference),
            Figure(path: "webhook lag at \(Int(Self.pacedRate)) lines/s", name: "p99 over \(pacedLags.count) events", unit: "s",
                   value: Measure.quantile(pacedLags, 0.99), baselineName: nil, baseline: nil, goal: .reference),
        ]
    }

    private func writeDemo(_ file: String) throws -> (lines: Int, users: Int) {
        var generator = DemoGenerator(seed: 42, users: Int.max, maxLines: events)
        var text = ""
        var lines = 0
        let handle = try FileHandle(forWritingTo: createEmpty(file))
        defer { try? handle.close() }
        while let line = generator.next() {
            text += line
            text += "\n"
            lines += 1
            if text.utf8.count > 1 << 20 {
                handle.write(Data(text.utf8))
                text = ""
            }
        }
        handle.write(Data(text.utf8))
        return (lines, generator.usersGenerated)
    }

    private func createEmpty(_ path: String) throws -> URL {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw BenchError("cannot write \(path)") }
        return URL(fileURLWithPath: path)
    }

    private func ledgerBinary() -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("ledger").path
    }

    /// The seed of the query figures' users: `--seed`, or a new one, printed either way.
    private func querySeed() -> UInt64 {
        let seed = self.seed ?? UInt64.random(in: 1...999_999)
        step("query users drawn with --seed \(seed)")
        return seed
    }

    /// Blocks read into shared buffers during a round of lookups, per user looked up (each user
    /// is one `unconsumed` and one `subscriptions --at`).
    private func blocksPerUser(_ q: QueryLatencies) -> String {
        String(format: "%.2f", Double(q.blocksRead) / Double(max(q.subscriptions.count, 1)))
    }

    private func step(_ text: String) {
        FileHandle.standardError.write(Data("ledger-bench: \(text)\n".utf8))
    }
}

extension Connection {
    func migrateAndClose() throws {
        defer { close() }
        try Migrator().migrate(self)
    }
}
