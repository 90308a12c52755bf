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

    @Option(help: "The pgbench binary.")
    var pgbench = "/usr/lib/postgresql/15/bin/pgbench"

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Flag(help: "Keep the scratch database.")
    var keep = false

    func run() async throws {
        let server = Ledger.configuration(databaseURL)
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

        for c in [1, clients] {
            step("single-row INSERT baseline and library record, \(c) client(s)")
            var base: [Double] = [], mine: [Double] = []
            for r in 0..<runs {
                base.append(try baselines.insertTPS(clients: c, seconds: seconds))
                mine.append(try await paths.recordRate(clients: c, seconds: Double(seconds), tag: "r\(c)-\(r)"))
            }
            figures.append(Figure(path: "record a purchase (library)", name: "events/s at \(c) client\(c == 1 ? "" : "s")",
                                  unit: "events/s", value: Measure.median(mine), baselineName: "INSERT TPS (pgbench -M prepared)",
                                  baseline: Measure.median(base), goal: .ratioAtLeast(0.7)))
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
                              baseline: Measure.median(base), goal: .ratioAtLeast(0.7)))

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
        let queries = try paths.queryLatencies(users: users, lookups: 2000, at: DemoGenerator.clock.date)
        for (label, values) in [("unconsumed", queries.unconsumed), ("subscriptions --at", queries.subscriptions)] {
            for (q, tag) in [(0.5, "p50"), (0.99, "p99")] {
                figures.append(Figure(path: "\(label) (library)", name: "\(tag) latency", unit: "ms",
                                      value: Measure.quantile(values, q), baselineName: "primary-key SELECT \(tag)",
                                      baseline: Measure.quantile(pk, q), goal: .ratioAtMost(2)))
            }
        }
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

        step("30-day analytics revenue and subscribers")
        let reports = try (0..<runs).map { _ in try paths.analyticsSeconds() }
        for (label, values) in [("revenue", reports.map(\.revenue)), ("subscribers", reports.map(\.subscribers))] {
            figures.append(Figure(path: "analytics \(label), 30 days by day", name: "seconds", unit: "s",
                                  value: Measure.median(values), baselineName: nil, baseline: nil, goal: .valueAtMost(2)))
        }
        print(json ? Report.json(figures, events: logEvents) : Report.table(figures, events: logEvents, runs: runs))
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
