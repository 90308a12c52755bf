import Foundation
import Hummingbird
import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// The webhooks' measure: `ledger ingest` of a demo file into a ledger whose `ledger
/// serve` delivers every event to a fast receiver on loopback, beside the same ingest into a
/// ledger with a server and no endpoint. Each run has a scratch database of its own.
struct WebhookPaths {
    let serverConninfo: String
    let ledgerBinary: String
    let deliveryConcurrency: Int

    /// One run's figures.
    struct Run {
        /// `ledger ingest` lines per second.
        var ingestPerSecond: Double
        /// Event deliveries answered per second, from the first to the last.
        var deliveriesPerSecond: Double
        /// Per event, seconds from its commit (recorded_at) to its first arrival at the receiver.
        var lags: [Double]
        /// Seconds from the end of the ingest to the last delivery.
        var drainSeconds: Double
    }

    /// A receiver that answers 204 at once and keeps each event id's first arrival.
    final class Receiver: Sendable {
        let arrivals = Mutex<[String: Date]>([:])
        let port: Int
        init(port: Int) { self.port = port }
        var url: String { "http://127.0.0.1:\(port)/hook" }
    }

    /// Runs `body` with a receiver listening on a free loopback port.
    static func withReceiver<T: Sendable>(_ body: @Sendable (Receiver) async throws -> T) async throws -> T {
        let box = Mutex<Receiver?>(nil)
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let now = Date()
            if let id = request.headers[.init("Ledger-Event-Id")!], let receiver = box.withLock({ $0 }) {
                receiver.arrivals.withLock { if $0[id] == nil { $0[id] = now } }
            }
            return Response(status: .noContent)
        }
        var logger = Logger(label: "bench-receiver")
        logger.logLevel = .critical
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { bound.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask { try? await group.run(); return nil }
            var next = ports.makeAsyncIterator()
            guard let port = await next.next(), port > 0 else { throw BenchError("the receiver did not start") }
            let receiver = Receiver(port: port)
            box.withLock { $0 = receiver }
            let result: Result<T, any Error>
            do { result = .success(try await body(receiver)) } catch { result = .failure(error) }
            await group.triggerGracefulShutdown()
            return try result.get()
        }
    }

    /// One run: a scratch database, `ledger serve` (delivering to `receiver` when given), the
    /// ingest of `file`, then (with a receiver) the wait for every event's delivery.
    func measure(file: String, lines: Int, receiver: Receiver?, tag: String, progress: (String) -> Void) async throws -> Run {
        try await withServedLedger(receiver: receiver, tag: tag) { conninfo in
            let ingest = try LedgerPaths(conninfo: conninfo).ingest(file: file, lines: lines, ledgerBinary: ledgerBinary)
            let ingested = Date()
            guard let receiver else { return Run(ingestPerSecond: ingest.perSecond, deliveriesPerSecond: 0, lags: [], drainSeconds: 0) }
            return try await awaitDeliveries(conninfo: conninfo, receiver: receiver, ingest: ingest.perSecond, ingested: ingested,
                                             tag: tag, progress: progress)
        }
    }

    /// The lag at a steady rate the deliveries keep up with, which a bulk ingest's backlog hides:
    /// the first `lines` lines of `file` written to `ledger ingest - --batch-size 1` at `rate`
    /// lines a second (a batch of lines each 10 ms), each committed as it comes.
    func measurePaced(file: String, lines: Int, rate: Double, receiver: Receiver, progress: (String) -> Void) async throws -> Run {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let chosen = Array(text.split(separator: "\n", omittingEmptySubsequences: true).prefix(lines))
        return try await withServedLedger(receiver: receiver, tag: "paced") { conninfo in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ledgerBinary)
            process.arguments = ["ingest", "-", "--batch-size", "1", "--database-url", conninfo]
            process.standardOutput = FileHandle.nullDevice
            let input = Pipe()
            process.standardInput = input
            try process.run()
            let start = Date()
            var written = 0
            while written < chosen.count {
                let due = min(chosen.count, Int(Date().timeIntervalSince(start) * rate) + 1)
                if due > written {
                    input.fileHandleForWriting.write(Data((chosen[written..<due].joined(separator: "\n") + "\n").utf8))
                    written = due
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
            let ingested = Date()
            guard process.terminationStatus <= 1 else { throw BenchError("ledger ingest exited \(process.terminationStatus)") }
            return try await awaitDeliveries(conninfo: conninfo, receiver: receiver,
                                             ingest: Double(chosen.count) / ingested.timeIntervalSince(start), ingested: ingested,
                                             tag: "paced", progress: progress)
        }
    }

    /// Runs `body` with a scratch database of its own and `ledger serve` on it, delivering to
    /// `receiver` when given.
    private func withServedLedger(receiver: Receiver?, tag: String, _ body: (String) async throws -> Run) async throws -> Run {
        let name = "ledger_bench_webhooks_\(getpid())_\(tag)"
        let admin = try Connection.connect(ConnectionConfiguration(serverConninfo, database: "postgres"))
        try admin.executeScript(unsafeSQL: "CREATE DATABASE \(name)")
        defer {
            _ = try? admin.executeScript(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            admin.close()
        }
        let conninfo = try ConnectionConfiguration(serverConninfo, database: name).keywordConninfo()
        try Connection.connect(ConnectionConfiguration(conninfo)).migrateAndClose()
        if let receiver {
            receiver.arrivals.withLock { $0 = [:] }
            _ = try run(ledgerBinary, ["webhooks", "add", "--url", receiver.url, "--database-url", conninfo])
        }
        let key = try run(ledgerBinary, ["keys", "add", "--role", "writer", "--database-url", conninfo])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try ServeProcess(binary: ledgerBinary, conninfo: conninfo, poolSize: 16, key: key,
                                      environment: ["LEDGER_LOG_LEVEL": "error", "LEDGER_JOB_CONCURRENCY": String(deliveryConcurrency)])
        defer { server.stop() }
        return try await body(conninfo)
    }

    /// Waits until every event of the ledger has reached `receiver`: the run's figures.
    private func awaitDeliveries(conninfo: String, receiver: Receiver, ingest: Double, ingested: Date, tag: String,
                                 progress: (String) -> Void) async throws -> Run {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        var recorded: [String: Double] = [:]
        for row in try connection.query("SELECT position, extract(epoch FROM recorded_at)::float8 AS at FROM ledger.events") {
            recorded["event:\(try row.decode("position", as: Int64.self))"] = try row.decode("at", as: Double.self)
        }
        var lastReport = Date.distantPast
        while true {
            let arrived = receiver.arrivals.withLock { arrivals in recorded.keys.filter { arrivals[$0] != nil }.count }
            if arrived == recorded.count { break }
            if Date().timeIntervalSince(lastReport) >= 5 {
                progress("\(tag): \(arrived) of \(recorded.count) events delivered")
                lastReport = Date()
            }
            guard Date().timeIntervalSince(ingested) < 1800 else { throw BenchError("\(recorded.count - arrived) events undelivered after 30 minutes") }
            try await Task.sleep(for: .milliseconds(200))
        }
        let arrivals = receiver.arrivals.withLock { $0 }
        let times = recorded.keys.compactMap { arrivals[$0]?.timeIntervalSince1970 }
        let lags = recorded.compactMap { id, at in arrivals[id].map { $0.timeIntervalSince1970 - at } }
        let span = (times.max() ?? 0) - (times.min() ?? 0)
        return Run(ingestPerSecond: ingest, deliveriesPerSecond: Double(times.count) / max(span, 0.001), lags: lags,
                   drainSeconds: (times.max() ?? 0) - ingested.timeIntervalSince1970)
    }
}
