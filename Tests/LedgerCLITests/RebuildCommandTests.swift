import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("ledger rebuild and ledger verify, as processes")
struct RebuildCommandTests {
    @Test func verifyNamesACorruptedRowAndRebuildRepairsIt() async throws {
        try await TestDatabase.with { db in
            #expect(try LedgerProcess.run(["demo", "--users", "40", "--database-url", db.conninfo]).status == 0)
            let events = try db.withConnection { c in try c.count("SELECT count(*) FROM ledger.events") }
            let equal = try LedgerProcess.run(["verify", "--database-url", db.conninfo])
            #expect(equal.status == 0, "\(equal.stderr)")
            #expect(equal.stdout.contains("the projections equal a replay of \(events) events"))
            // Without a terminal: plain progress lines on standard error.
            #expect(equal.stderr.contains("verify: replaying: 0/\(events) events (0%), 0 events/s"))

            let (seq, user) = try db.withConnection { c in
                let row = try c.query("SELECT payment_seq, user_id FROM ledger.payments ORDER BY payment_seq LIMIT 1")[0]
                let seq = try row.decode("payment_seq", as: String.self)
                try c.execute("UPDATE ledger.payments SET price = price + 1 WHERE payment_seq = \(seq)")
                return (seq, try row.decode("user_id", as: String.self))
            }
            let differs = try LedgerProcess.run(["verify", "--quiet", "--database-url", db.conninfo])
            #expect(differs.status == 1 && differs.stderr.isEmpty)
            let line = try #require(differs.lines.first { $0.contains("payment \(seq)") })
            #expect(line.hasPrefix("payments") && line.contains("user \(user)") && line.contains("price"))
            let json = try LedgerProcess.run(["verify", "--json", "--quiet", "--database-url", db.conninfo])
            let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(json.status == 1 && array.count == 1)
            #expect(array.first?["table"] as? String == "payments" && array.first?["column"] as? String == "price")
            #expect((array.first?["key"] as? [String: Any])?["payment_seq"] as? String == seq)
            #expect(array.first?["userId"] as? String == user && array.first?["kind"] as? String == "changed")
            let live = try #require(Decimal(string: array.first?["live"] as? String ?? ""))
            let replayed = try #require(Decimal(string: array.first?["replayed"] as? String ?? ""))
            #expect(live - replayed == 1)

            let rebuild = try LedgerProcess.run(["rebuild", "--quiet", "--database-url", db.conninfo])
            #expect(rebuild.status == 0 && rebuild.stderr.isEmpty, "\(rebuild.stderr)")
            #expect(rebuild.stdout.hasPrefix("rebuilt the projections from \(events) events"))
            #expect(try LedgerProcess.run(["verify", "--quiet", "--database-url", db.conninfo]).status == 0)
        }
    }

    @Test func rebuildShowsItsPhasesAndRefusesUnknownProjections() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c in try appendBulk(c, count: 300) }
            let out = try LedgerProcess.run(["rebuild", "--projection", "ledger", "--batch-size", "100", "--database-url", db.conninfo])
            #expect(out.status == 0, "\(out.stderr)")
            for phase in ["rebuild: replaying: 0/400 events (0%)", "rebuild: replaying: 400/400 events (100%)", "rebuild: catching up", "rebuild: swapping"] {
                #expect(out.stderr.contains(phase), "\(out.stderr)")
            }
            let unknown = try LedgerProcess.run(["rebuild", "--projection", "payments", "--database-url", db.conninfo])
            #expect(unknown.status == 2 && unknown.stderr.contains("unknown projection \"payments\""))
            #expect(try LedgerProcess.run(["verify", "--projection", "all", "--quiet", "--database-url", db.conninfo]).status == 0)
        }
    }

    @Test func verifyChainExitsOneNamingTheAlteredEvent() async throws {
        try await TestDatabase.with { db in
            #expect(try LedgerProcess.run(["demo", "--users", "10", "--database-url", db.conninfo]).status == 0)
            let intact = try LedgerProcess.run(["verify", "--chain", "--database-url", db.conninfo])
            #expect(intact.status == 0 && intact.stdout.hasPrefix("the hash chains hold"))
            let (position, stream) = try db.withConnection { c in
                let row = try c.query("SELECT position, stream FROM ledger.events WHERE type = 'PurchaseRecorded' ORDER BY position OFFSET 5 LIMIT 1")[0]
                let position = try row.decode("position", as: Int64.self)
                try c.executeScript(unsafeSQL: """
                    ALTER TABLE ledger.events DISABLE TRIGGER USER;
                    UPDATE ledger.events SET data = jsonb_set(data, '{price}', '"0.01"') WHERE position = \(position);
                    ALTER TABLE ledger.events ENABLE TRIGGER USER;
                    """)
                return (position, try row.decode("stream", as: String.self))
            }
            let broken = try LedgerProcess.run(["verify", "--chain", "--database-url", db.conninfo])
            #expect(broken.status == 1)
            #expect(broken.lines.first?.contains("first at position \(position), stream \(stream) version 1") == true, "\(broken.stdout)")
            let json = try LedgerProcess.run(["verify", "--chain", "--json", "--database-url", db.conninfo])
            let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(json.status == 1 && array.count == 1 && (array[0]["position"] as? Int).map(Int64.init) == position)
            #expect(array[0]["problem"] as? String == "altered")
        }
    }

    @Test func aRebuildWhileAnotherProcessIngestsAndConsumesLosesNothing() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("rebuild-\(UUID().uuidString).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        // More lines than the ingest can write while the rebuild runs: it must still be writing
        // when the rebuild ends (it is killed then).
        #expect(try LedgerProcess.run(["demo", "--write", file, "--events", "300000", "--seed", "9"]).status == 0)
        try await TestDatabase.with { db in
            try db.withConnection { c in try appendBulk(c, count: 30_000) }
            let base = try db.withConnection { c in try c.count("SELECT count(*) FROM ledger.events") }
            // One line per transaction: a steady stream of small appends, as a game backend sends.
            let ingest = try LedgerProcess.start(["ingest", file, "--batch-size", "1", "--database-url", db.conninfo])
            defer { if ingest.process.isRunning { kill(ingest.process.processIdentifier, SIGKILL) } }
            // Start the rebuild once the ingest is writing (on a thread of its own, so that other
            // tests cannot delay it until the ingest is done).
            let run = OnThread { () throws -> LedgerProcess.Output? in
                let c = try db.connect()
                defer { c.close() }
                let end = Date().addingTimeInterval(60)
                while try c.count("SELECT count(*) FROM ledger.events") <= base + 100 {
                    if Date() > end { return nil }
                    Thread.sleep(forTimeInterval: 0.002)
                }
                return try LedgerProcess.run(["rebuild", "--batch-size", "5000", "--quiet", "--database-url", db.conninfo])
            }
            let rebuild = try #require(try await run.value() ?? nil, "the ingest wrote nothing, or the rebuild did not end")
            #expect(rebuild.status == 0, "\(rebuild.stderr)")
            let meanwhile = rebuild.stdout.split(separator: ",").first { $0.contains("appended meanwhile") }
                .flatMap { Int($0.split(separator: " ").first ?? "") } ?? 0
            #expect(meanwhile > 0, "\(rebuild.stdout)")
            #expect(ingest.process.isRunning, "the ingest ended before the rebuild did")
            kill(ingest.process.processIdentifier, SIGKILL)
            _ = ingest.wait()

            #expect(try LedgerProcess.run(["verify", "--quiet", "--database-url", db.conninfo]).status == 0)
            try db.withConnection { c throws in
                for (events, rows) in [
                    ("type IN ('PurchaseRecorded', 'RenewalRecorded')", "SELECT count(*) FROM ledger.payments"),
                    ("type = 'PaymentConsumed'", "SELECT count(*) FROM ledger.payments WHERE consumed_at IS NOT NULL"),
                    ("type = 'PaymentRefunded'", "SELECT count(*) FROM ledger.payments WHERE refunded_at IS NOT NULL"),
                    ("type = 'AutoRenewCancelled'", "SELECT count(*) FROM ledger.auto_renew_changes"),
                    ("type = 'PurchasesRestored'", "SELECT count(*) FROM ledger.restores"),
                ] {
                    #expect(try c.count("SELECT count(*) FROM ledger.events WHERE \(events)") == (try c.count(rows)), "\(events)")
                }
            }
        }
    }

    @Test func aRebuildKilledHalfwayLeavesTheProjectionsAnsweringAsBeforeAndASecondOneCompletes() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c in try appendBulk(c, count: 30_000) }  // 40,000 events
            let before = try answers(db)
            // Kill it as soon as it says it replays (400 batches to go), from a thread of its own
            // so that no other test can hold the kill up.
            let run = OnThread { () throws -> (killedReplaying: Bool, reason: Process.TerminationReason, stdout: String) in
                let process = Process()
                process.executableURL = LedgerProcess.executable
                process.arguments = ["rebuild", "--batch-size", "100", "--database-url", db.conninfo]
                let out = Pipe(), err = Pipe()
                process.standardOutput = out
                process.standardError = err
                try process.run()
                var seen = Data()
                var killed = false
                while !killed {
                    let chunk = readChunk(err.fileHandleForReading)
                    if chunk.isEmpty { break }  // it ended
                    seen.append(chunk)
                    if String(decoding: seen, as: UTF8.self).contains("rebuild: replaying: 0/") {
                        kill(process.processIdentifier, SIGKILL)
                        killed = true
                    }
                }
                let stdout = String(decoding: readAll(out.fileHandleForReading), as: UTF8.self)
                process.waitUntilExit()
                return (killed, process.terminationReason, stdout)
            }
            let killed = try #require(try await run.value())
            #expect(killed.killedReplaying && killed.reason == .uncaughtSignal)
            #expect(!killed.stdout.contains("rebuilt"), "\(killed.stdout)")
            #expect(try answers(db) == before)
            // The server notices the lost client after the batch it was running, and rolls back.
            #expect(try await waitUntil {
                try db.withConnection { c in
                    try c.count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ledger rebuild'")
                } == 0
            })
            #expect(try answers(db) == before)

            // Bounded generously: on a loaded machine (the whole suite beside it) a rebuild of this
            // log took over the default two minutes and was killed by the harness (status 9).
            let again = try LedgerProcess.run(["rebuild", "--quiet", "--database-url", db.conninfo], timeout: 600)
            #expect(again.status == 0 && !again.timedOut, "\(again.status) \(again.stderr)")
            #expect(try answers(db) == before)
            #expect(try LedgerProcess.run(["verify", "--quiet", "--database-url", db.conninfo]).status == 0)
        }
    }
}

/// What the live projections answer: a digest of every table, and a query as a process.
private func answers(_ db: TestDatabase) throws -> [String] {
    let digest = try db.withConnection { c in
        try c.query("""
            SELECT concat_ws('|', (SELECT md5(string_agg(p::text, ',' ORDER BY payment_seq)) FROM ledger.payments p),
                                  (SELECT count(*) FROM ledger.lineages), (SELECT count(*) FROM ledger.restores)) AS d
            """)[0].decode("d", as: String.self)
    }
    let query = try LedgerProcess.run(["unconsumed", "--user", "bulk-7", "--json", "--database-url", db.conninfo])
    return [digest, "\(query.status)", query.stdout]
}

/// Runs `body` on a thread of its own (not Swift's small cooperative pool, which blocking
/// tests can fill) and lets a test await its result.
private final class OnThread<T>: @unchecked Sendable {
    // @unchecked: `result` is written once before `done` is signalled and read only after.
    private var result: Result<T, Error>?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> T) {
        let thread = Thread { [self] in
            result = Result { try body() }
            done.signal()
        }
        thread.start()
    }

    /// The body's value (nil after `timeout` seconds); rethrows its error.
    func value(timeout: TimeInterval = 180) async throws -> T? {
        let end = Date().addingTimeInterval(timeout)
        while done.wait(timeout: .now()) != .success {
            if Date() > end { return nil }
            try await Task.sleep(for: .milliseconds(5))
        }
        done.signal()
        return try result!.get()
    }
}

/// Polls `condition` every few milliseconds for up to `seconds`.
private func waitUntil(seconds: TimeInterval = 60, _ condition: () throws -> Bool) async throws -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(5))
    }
    return false
}

/// Appends `count` consumable purchases of 997 users, and a consume for every third, straight to
/// the log, and projects them with the live `ledger.project_range`: a large log in seconds. 500
/// purchases per transaction: each new stream takes an advisory lock until the transaction ends.
private func appendBulk(_ c: Connection, count: Int) throws {
    for first in stride(from: 1, through: count, by: 500) {
        let last = min(count, first + 499)
        try c.transaction { tx in
            let from = try tx.query("""
                SELECT min(p) AS p FROM (
                    SELECT ledger.append('payment:B' || i, 'PurchaseRecorded',
                           jsonb_build_object('userId', 'bulk-' || (i % 997), 'storeCode', 'AS', 'productId', 'gem_100',
                                              'productType', 'CONSUMABLE', 'price', '0.99', 'currency', 'USD',
                                              'paymentSeq', 'B' || i, 'transactionId', 'TB' || i,
                                              'purchaseTime', to_char(timestamptz '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                                              'payload', 'p' || i, 'sandboxPayment', false, 'promotionPayment', false,
                                              'purchaseTokenSha256', encode(sha256(convert_to('tok' || i, 'UTF8')), 'hex')),
                           timestamptz '2026-01-01' + i * interval '1 second') AS p
                      FROM generate_series(\(first)::int, \(last)::int) AS i) appended
                """)[0].decode("p", as: Int64.self)
            try tx.execute("""
                SELECT ledger.append('payment:B' || i, 'PaymentConsumed', jsonb_build_object('paymentSeq', 'B' || i, 'userId', 'bulk-' || (i % 997)),
                       timestamptz '2026-01-02' + i * interval '1 second')
                  FROM generate_series(\(first)::int, \(last)::int) AS i WHERE i % 3 = 0
                """)
            try tx.execute("SELECT ledger.project_range(\(from), (SELECT max(position) FROM ledger.events))")
        }
    }
}
