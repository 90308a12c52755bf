import LedgerDemo
import Foundation
import Postgres
import PurchaseLedger

/// The ledger's own paths, measured the way a backend or an operator uses them.
struct LedgerPaths {
    let conninfo: String

    /// Purchases per second recorded through the library by `clients` concurrent callers.
    func recordRate(clients: Int, seconds: Double, tag: String, poolSize: Int? = nil) async throws -> Double {
        try await rate(clients: clients, poolSize: poolSize ?? clients, seconds: seconds, limit: .max) { ledger, client, n in
            _ = try await ledger.record(benchPayment("\(tag)-\(client)-\(n)", user: n), kind: .purchase)
        }
    }

    /// Consumes per second through the library by `clients` concurrent callers, each consuming
    /// its own payments (recorded beforehand, in batches).
    func consumeRate(clients: Int, seconds: Double, perClient: Int, tag: String, poolSize: Int? = nil) async throws -> Double {
        try recordForConsumes(clients: clients, perClient: perClient, tag: tag)
        return try await rate(clients: clients, poolSize: poolSize ?? clients, seconds: seconds, limit: perClient) { ledger, client, n in
            let seq = "\(tag)-\(client)-\(n)"
            guard case .consumed = try await ledger.consume(paymentSeq: seq, userId: benchUser(n), purchaseToken: "tok-\(seq)") else {
                throw BenchError("payment \(seq) was not consumed")
            }
        }
    }

    /// Records `perClient` purchases (`TAG-CLIENT-N`) for each of `clients` consumers, in batches
    /// of 500, for the consume figures of the library and of HTTP.
    func recordForConsumes(clients: Int, perClient: Int, tag: String) throws {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        for client in 0..<clients {
            for chunk in stride(from: 0, to: perClient, by: 500) {
                let commands = (chunk..<min(perClient, chunk + 500)).map {
                    LedgerCommand.record(benchPayment("\(tag)-\(client)-\($0)", user: $0), kind: .purchase)
                }
                _ = try connection.executeBatch(commands)
            }
        }
    }

    /// Calls per second of `call(ledger, client, n)` from `clients` concurrent callers sharing a
    /// pool of `poolSize` connections, each calling with n = 0, 1, ... until `seconds` passed or
    /// `limit` calls.
    private func rate(clients: Int, poolSize: Int, seconds: Double, limit: Int,
                      _ call: @escaping @Sendable (Ledger, Int, Int) async throws -> Void) async throws -> Double {
        let ledger = Ledger(databaseURL: conninfo, poolSize: poolSize)
        defer { Task { await ledger.close() } }
        let deadline = Date().addingTimeInterval(seconds)
        let start = Date()
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in 0..<clients {
                group.addTask {
                    var n = 0
                    while Date() < deadline, n < limit {
                        try await call(ledger, client, n)
                        n += 1
                    }
                    return n
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(total) / Date().timeIntervalSince(start)
    }

    /// Runs `ledger ingest FILE` as operators do (every result printed, to /dev/null here):
    /// lines per second and the process's peak resident memory in MB.
    func ingest(file: String, lines: Int, ledgerBinary: String) throws -> (perSecond: Double, peakMB: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ledgerBinary)
        process.arguments = ["ingest", file, "--database-url", conninfo]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        var peakKB = 0
        let seconds = try Measure.time {
            try process.run()
            while process.isRunning {
                if let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
                   let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                   let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) {
                    peakKB = max(peakKB, kb)
                }
                usleep(20_000)
            }
        }
        guard process.terminationStatus <= 1 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw BenchError("ledger ingest exited \(process.terminationStatus): \(text)")
        }
        return (Double(lines) / seconds, Double(peakKB) / 1024)
    }

    /// Events per second of `ledger rebuild` of every projection (shadow replay, index build,
    /// swap), as the operator's command runs it.
    func rebuildRate() throws -> (events: Int, perSecond: Double) {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        let summary = try ProjectionRebuilder(connection: connection).rebuild()
        return (summary.events, Double(summary.events) / summary.seconds)
    }

    /// Seconds of the 30-day `analytics revenue` and `analytics subscribers` reports by day, over
    /// the 30 days up to the demo clock's day (2026-11-15; `to` is exclusive), through the library.
    func analyticsSeconds() throws -> (revenue: Double, subscribers: Double) {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        let query = AnalyticsQuery(from: CalendarDay("2026-10-17")!, to: CalendarDay("2026-11-16")!)
        return (try Measure.time { _ = try RevenueRow.fetchAll(connection, query) },
                try Measure.time { _ = try SubscribersRow.fetchAll(connection, query) })
    }

    /// Latencies in milliseconds of `unconsumed` and `subscriptions --at` for users drawn at
    /// random from `users`, and how many blocks the database read into shared buffers meanwhile.
    func queryLatencies(users: [String], lookups: Int, at: Date, seed: UInt64) throws -> QueryLatencies {
        guard !users.isEmpty else { throw BenchError("the ledger has no users to look up") }
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        var random = SplitMix64(seed: seed)
        var latencies = QueryLatencies()
        let blocksBefore = try blocksRead(connection)
        for _ in 0..<lookups {
            let user = users[Int(random.next() % UInt64(users.count))]
            latencies.unconsumed.append(try Measure.time { _ = try UnconsumedPayment.fetchAll(connection, userId: user) } * 1000)
            latencies.subscriptions.append(try Measure.time { _ = try Subscription.fetchAll(connection, userId: user, at: at) } * 1000)
        }
        latencies.blocksRead = try blocksRead(connection) - blocksBefore
        return latencies
    }

    /// Blocks the database has read from outside shared buffers (the kernel's page cache or the
    /// disk), by every backend, this connection's own counts flushed first: what a lookup costs
    /// when the ledger's indexes and tables do not fit in shared buffers.
    private func blocksRead(_ connection: Connection) throws -> Int {
        _ = try connection.query("SELECT pg_stat_force_next_flush()")
        return try connection.query("SELECT blks_read FROM pg_stat_database WHERE datname = current_database()")[0]
            .decode("blks_read", as: Int.self)
    }
}

/// One round of lookups: each query's latencies in milliseconds, and the blocks the database
/// read into shared buffers during the round (every backend's, autovacuum's included).
struct QueryLatencies {
    var unconsumed: [Double] = []
    var subscriptions: [Double] = []
    var blocksRead = 0
}

extension LedgerPaths {
    /// The users of an existing ledger's payments, the benchmark's own (`bench-N`) left out, in
    /// one order: the users its query figures draw from. Read from the ledger rather than
    /// assumed to be the demo's `user-0` … `user-N`, so that the lookups spread over the whole
    /// ledger whatever wrote it (a ledger of copied demo users spreads over every copy).
    func ledgerUsers() throws -> [String] {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        return try connection.query("SELECT DISTINCT user_id FROM ledger.payments WHERE user_id NOT LIKE 'bench-%' ORDER BY user_id")
            .map { try $0.decode("user_id", as: String.self) }
    }

    /// How many events the ledger's log holds: the size a report's query figures were measured at.
    func logEvents() throws -> Int {
        let connection = try Connection.connect(ConnectionConfiguration(conninfo))
        defer { connection.close() }
        return try connection.query("SELECT count(*)::bigint AS n FROM ledger.events")[0].decode("n", as: Int.self)
    }
}

/// A consumable purchase as a backend would see it: one of many users, bought at its own time.
func benchPayment(_ seq: String, user n: Int) -> Payment {
    Payment(userId: benchUser(n), storeCode: .appStore, productId: "gem_100", productType: .consumable,
            price: "0.99", currency: "USD", paymentSeq: seq, purchaseToken: "tok-\(seq)",
            transactionId: "B-\(seq)", purchaseTime: Date(timeIntervalSince1970: 1_767_225_600 + Double(n) * 7.3))
}

/// The benchmark's users: a thousand of them, so that payments spread over the indexes as real ones do.
func benchUser(_ n: Int) -> String { "bench-\(n % 1000)" }
