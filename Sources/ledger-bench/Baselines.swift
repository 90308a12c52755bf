import Foundation
import Postgres

/// The same server's own limits, measured in the same run as the ledger's figures.
struct Baselines {
    let conninfo: String
    let pgbench: String

    /// Single-row INSERT transactions of an event-sized row, `pgbench -M prepared` at `clients`.
    func insertTPS(clients: Int, seconds: Int) throws -> Double {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        try connection.executeScript(unsafeSQL: """
            CREATE TABLE IF NOT EXISTS bench_insert (
                position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                stream text NOT NULL, data jsonb NOT NULL, at timestamptz NOT NULL DEFAULT now())
            """)
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-\(getpid()).sql")
        try """
            \\set id random(1, 2000000000)
            INSERT INTO bench_insert (stream, data) VALUES ('payment' || :id, jsonb_build_object('userId', 'user-00042', 'storeCode', 'AS', 'productId', 'gem_100', 'productType', 'CONSUMABLE', 'price', '0.99', 'currency', 'USD', 'paymentSeq', '2026000000042', 'transactionId', '2000000000000042', 'purchaseTime', '2026-01-01T000000.000000Z', 'sandboxPayment', false, 'promotionPayment', false, 'purchaseTokenSha256', '6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b'));
            """.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        // pgbench's -T relies on SIGALRM, which a child of a Swift process may inherit blocked:
        // run a fixed number of transactions instead, sized by a short first run.
        func pgbenchTPS(transactions: Int) throws -> Double {
            let output = try run(pgbench, ["-n", "-M", "prepared", "-c", "\(clients)", "-j", "\(min(clients, 2))",
                                           "-t", "\(transactions)", "-f", script.path, conninfo])
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
                  let tps = Double(line.dropFirst(6).prefix { $0 != " " }) else {
                throw BenchError("pgbench printed no tps: \(output.suffix(300))")
            }
            return tps
        }
        let estimate = try pgbenchTPS(transactions: 100)
        return try pgbenchTPS(transactions: max(100, Int(estimate * Double(seconds)) / clients))
    }

    /// Rows per second that `COPY ... FROM STDIN` loads into a bare table of the same width.
    func copyRowsPerSecond(rows: Int) throws -> Double {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        try connection.executeScript(unsafeSQL: """
            DROP TABLE IF EXISTS bench_copy;
            CREATE TABLE bench_copy (stream text, data jsonb, at timestamptz)
            """)
        let data = #"{"userId":"user-00042","storeCode":"AS","productId":"gem_100","productType":"CONSUMABLE","price":"0.99","currency":"USD","paymentSeq":"2026000000042","transactionId":"2000000000000042","purchaseTime":"2026-01-01T00:00:00.000000Z","sandboxPayment":false,"promotionPayment":false,"purchaseTokenSha256":"6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"}"#
        let seconds = try Measure.time {
            try connection.copyFrom(unsafeSQL: "COPY bench_copy (stream, data, at) FROM STDIN",
                                    rows: (0..<rows).lazy.map { ["payment:\($0)", data, "2026-01-01 00:00:00+00"] })
        }
        try connection.executeScript(unsafeSQL: "DROP TABLE bench_copy")
        return Double(rows) / seconds
    }

    /// Latencies in milliseconds of primary-key SELECTs through the same client path as the ledger.
    func primaryKeyLatencies(lookups: Int) throws -> [Double] {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        try connection.executeScript(unsafeSQL: """
            DROP TABLE IF EXISTS bench_pk;
            CREATE TABLE bench_pk AS SELECT i AS id, md5(i::text) AS payload FROM generate_series(1, 100000) i;
            ALTER TABLE bench_pk ADD PRIMARY KEY (id);
            ANALYZE bench_pk
            """)
        var random = SystemRandomNumberGenerator()
        return try (0..<lookups).map { _ in
            let id = Int.random(in: 1...100_000, using: &random)
            return try Measure.time { _ = try connection.query("SELECT id, payload FROM bench_pk WHERE id = \(id)") } * 1000
        }
    }

    /// Drops the primary-key baseline's table (from a ledger the benchmark did not create).
    func dropPrimaryKeyTable() throws {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        try connection.executeScript(unsafeSQL: "DROP TABLE IF EXISTS bench_pk")
    }

    /// Rows per second of `CREATE TABLE ... AS SELECT * FROM ledger.events` on the same server.
    func ctasRowsPerSecond() throws -> (rows: Int, perSecond: Double) {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        let rows = try LedgerPaths(conninfo: conninfo).logEvents()
        try connection.executeScript(unsafeSQL: "DROP TABLE IF EXISTS bench_ctas")
        let seconds = try Measure.time {
            try connection.executeScript(unsafeSQL: "CREATE TABLE bench_ctas AS SELECT * FROM ledger.events")
        }
        try connection.executeScript(unsafeSQL: "DROP TABLE bench_ctas")
        return (rows, Double(rows) / seconds)
    }
}

/// Runs a program and returns its standard output; throws with its standard error when it fails.
func run(_ program: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchError("\(program) exited \(process.terminationStatus): \(String(decoding: errors, as: UTF8.self).suffix(400))")
    }
    return String(decoding: data, as: UTF8.self)
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
