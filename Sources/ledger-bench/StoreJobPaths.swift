import Foundation
import Postgres

/// The store jobs' measure: Google's renewal notifications pushed to `POST /notifications/google` of
/// a `ledger serve` that asks the Play Developer API (`shared/tools/fake-store-api` on loopback,
/// each answer a renewal), beside the same notifications pushed to a server that does not ask.
/// Each run has a scratch database of its own, seeded with the SDK purchases the notifications
/// renew (through `ledger ingest`, without the API: no job comes with them).
struct StoreJobPaths {
    /// The server's conninfo (scratch databases are made on it).
    let serverConninfo: String
    let ledgerBinary: String
    let fakeTool: String
    let connections: Int
    let jobConcurrency: Int

    static let package = "com.example.game"
    static let pushSecret = "bench-push-secret"

    /// One run's figures.
    struct Run {
        /// Notifications answered per second by the server, over `connections` connections.
        var postsPerSecond: Double
        /// Jobs done per second: from the first job written to the last one done.
        var jobsPerSecond: Double
        /// Per notification, seconds from its transaction to its payment's (the job's finish).
        var lags: [Double]
        /// Seconds from the last notification answered to the last job done.
        var drainSeconds: Double
    }

    /// The fake, serving a renewal (order `..0`, paid to April, acknowledged) for each token.
    func withFake<T>(tokens: Int, _ body: (_ baseURL: String, _ keys: URL) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-fake-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = directory.appendingPathComponent("keys")
        _ = try run(fakeTool, ["keys", "--out", keys.path])
        var subscriptions: [String: Any] = [:]
        for n in 0..<tokens {
            let order = Self.order(n) + "..0"
            subscriptions[Self.token(n)] = [
                "kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "US", "startTime": "2026-02-01T00:00:00Z",
                "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "latestOrderId": order,
                "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
                "lineItems": [["productId": "vip_month", "expiryTime": "2026-04-01T00:00:00Z", "latestSuccessfulOrderId": order,
                               "autoRenewingPlan": ["autoRenewEnabled": true,
                                                    "recurringPrice": ["currencyCode": "USD", "units": "4", "nanos": 990_000_000]]]],
            ] as [String: Any]
        }
        let state: [String: Any] = ["credentials": "keys/credentials.json",
                                    "google": ["packageName": Self.package, "subscriptionsV2": subscriptions],
                                    "apple": ["bundleId": Self.package]]
        try JSONSerialization.data(withJSONObject: state).write(to: directory.appendingPathComponent("state.json"))
        let fake = Process()
        fake.executableURL = URL(fileURLWithPath: fakeTool)
        // The calls log goes nowhere: 10,000 lines a run would only cost the fake time.
        fake.arguments = ["--state", directory.appendingPathComponent("state.json").path, "--calls", "/dev/null", "--port", "0"]
        let output = Pipe()
        fake.standardOutput = output
        fake.standardError = FileHandle.nullDevice
        try fake.run()
        defer {
            // SIGKILL: a child inherits this process's blocked SIGTERM.
            kill(fake.processIdentifier, SIGKILL)
            fake.waitUntilExit()
        }
        var text = ""
        while !text.contains("\n") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { throw BenchError("fake-store-api exited before it listened") }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("listening ") else {
            throw BenchError("fake-store-api printed \(text.prefix(100))")
        }
        let baseURL = String(line.dropFirst("listening ".count))
        _ = try run(fakeTool, ["keys", "--out", keys.path, "--base-url", baseURL])
        return try body(baseURL, keys)
    }

    /// One run: a scratch database seeded with `count` SDK purchases, a server (asking Google when
    /// `googleAPI` is given), `count` renewal pushes, then (when asking) the wait for every job.
    /// `runsJobs` false: the server writes the jobs and runs none (`LEDGER_JOB_CONCURRENCY=0`), so
    /// the figure is the notification path's own, without the jobs' work beside it.
    func measure(count: Int, googleAPI: (baseURL: String, keys: URL)?, runsJobs: Bool = true, tag: String,
                 progress: (String) -> Void) throws -> Run {
        let name = "ledger_bench_jobs_\(getpid())_\(tag)"
        let admin = try Connection.connect(ConnectionConfiguration(serverConninfo, database: "postgres"))
        try admin.executeScript(unsafeSQL: "CREATE DATABASE \(name)")
        defer {
            _ = try? admin.executeScript(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            admin.close()
        }
        let conninfo = try ConnectionConfiguration(serverConninfo, database: name).keywordConninfo()
        try Connection.connect(ConnectionConfiguration(conninfo)).migrateAndClose()
        try seed(count: count, conninfo: conninfo)

        var environment = ["LEDGER_GOOGLE_PACKAGE_NAMES": Self.package, "LEDGER_GOOGLE_PUSH_SECRET": Self.pushSecret,
                           "LEDGER_LOG_LEVEL": "error", "LEDGER_JOB_CONCURRENCY": runsJobs ? String(jobConcurrency) : "0"]
        if let googleAPI {
            environment["LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE"] = googleAPI.keys.appendingPathComponent("google-service-account.json").path
            environment["LEDGER_GOOGLE_API_URL"] = googleAPI.baseURL
        }
        let key = try run(ledgerBinary, ["keys", "add", "--role", "writer", "--database-url", conninfo])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try ServeProcess(binary: ledgerBinary, conninfo: conninfo, poolSize: 8, key: key,
                                      environment: environment)
        defer { server.stop() }

        let perClient = (count + connections - 1) / connections
        let path = "/notifications/google?token=\(Self.pushSecret)"
        let posts = HTTPLoad.run(port: server.port, connections: connections, seconds: 3600, limit: perClient) { connection, client, n in
            let index = client * perClient + n
            guard index < count else { return }
            let answer = try connection.post(path, key: "", json: Self.push(index))
            guard answer.status == 200 else {
                throw BenchError("POST /notifications/google answered \(answer.status): \(answer.body.prefix(200))")
            }
        }
        if let failure = posts.firstFailure { throw BenchError(failure) }
        let postsDone = Date()
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        let jobs = try connection.query("SELECT count(*)::bigint AS n FROM ledger.jobs")[0].decode("n", as: Int64.self)
        guard jobs == (googleAPI == nil ? 0 : count) else { throw BenchError("\(tag): \(jobs) jobs written for \(count) notifications") }
        guard googleAPI != nil, runsJobs else {
            return Run(postsPerSecond: Double(count) / posts.seconds, jobsPerSecond: 0, lags: [], drainSeconds: 0)
        }

        var lastReport = Date.distantPast
        while true {
            let pending = try connection.query("SELECT count(*)::bigint AS n FROM ledger.jobs WHERE state = 'pending'")[0]
                .decode("n", as: Int64.self)
            if pending == 0 { break }
            if Date().timeIntervalSince(lastReport) >= 5 {
                progress("\(tag): \(pending) of \(count) jobs pending")
                lastReport = Date()
            }
            guard Date().timeIntervalSince(postsDone) < 1800 else { throw BenchError("\(pending) jobs still pending after 30 minutes") }
            Thread.sleep(forTimeInterval: 0.2)
        }
        let drained = Date().timeIntervalSince(postsDone)
        let outcomes = try connection.query("""
            SELECT count(*) FILTER (WHERE state = 'done' AND outcome = 'recorded')::bigint AS recorded,
                   extract(epoch FROM max(finished_at) - min(created_at))::float8 AS span
              FROM ledger.jobs
            """)[0]
        let recorded = try outcomes.decode("recorded", as: Int64.self)
        guard recorded == count else {
            throw BenchError("\(recorded) of \(count) jobs recorded their payment (see ledger jobs list --state failed)")
        }
        let span = try outcomes.decode("span", as: Double.self)
        let lags = try connection.query("SELECT extract(epoch FROM finished_at - created_at)::float8 AS lag FROM ledger.jobs")
            .map { try $0.decode("lag", as: Double.self) }
        return Run(postsPerSecond: Double(count) / posts.seconds, jobsPerSecond: Double(count) / span, lags: lags,
                   drainSeconds: drained)
    }

    /// The SDK purchases the pushes renew, through `ledger ingest` without the API.
    private func seed(count: Int, conninfo: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-seed-\(getpid()).ndjson")
        defer { try? FileManager.default.removeItem(at: file) }
        var text = ""
        for n in 0..<count {
            text += #"{"type":"purchase","userId":"\#(benchUser(n))","storeCode":"GG","productId":"vip_month","#
                + #""productType":"AUTO_RENEWABLE","price":"4.99","currency":"USD","paymentSeq":"GP-\#(n)","#
                + #""purchaseToken":"\#(Self.token(n))","transactionId":"\#(Self.order(n))","#
                + #""purchaseTime":"2026-02-01T00:00:00Z","expiryTime":"2026-03-01T00:00:00Z"}"# + "\n"
        }
        try Data(text.utf8).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ledgerBinary)
        process.arguments = ["ingest", file.path, "--database-url", conninfo]
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("ledger ingest of the seed exited \(process.terminationStatus)") }
    }

    static func token(_ n: Int) -> String { "bench-gtok-\(n)" }
    static func order(_ n: Int) -> String { String(format: "GPA.0000-0000-0000-%05d", n) }

    /// SUBSCRIPTION_RENEWED for token n, as Pub/Sub pushes it.
    static func push(_ n: Int) -> String {
        let data = #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"1772323205000","#
            + #""subscriptionNotification":{"version":"1.0","notificationType":2,"purchaseToken":"\#(token(n))","#
            + #""subscriptionId":"vip_month"}}"#
        return #"{"message":{"data":"\#(Data(data.utf8).base64EncodedString())","messageId":"bench-m-\#(n)","#
            + #""publishTime":"2026-03-01T00:00:05Z"},"subscription":"projects/p/subscriptions/play"}"#
    }
}
