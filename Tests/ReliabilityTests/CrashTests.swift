import Foundation
import LedgerTestSupport
import Postgres
import Testing

extension HeavyReliabilityTests {
    @Suite("Crashes of the ledger and of PostgreSQL")
    struct Crashes {
        @Test func killingIngestMidFileLosesNothingItReportedAndTheRerunFinishesTheFile() async throws {
            let dir = try ScratchDirectory()
            defer { dir.remove() }
            let input = dir.file("demo.ndjson")
            let written = try LedgerProcess.run(["demo", "--write", input, "--events", "8000", "--seed", "7"])
            try #require(written.status == 0, "\(written.stderr)")
            let file = try NDJSONFile(path: input)
            let types = file.types
            try await TestDatabase.with { db in
                let arguments = ["ingest", input, "--batch-size", "200", "--database-url", db.conninfo]
                let first = try LedgerProcess.start(arguments)
                let sawOutput = first.waitForOutput(timeout: 240) { $0.count >= 1500 }
                first.kill(SIGKILL)
                let killed = first.wait(timeout: 30)
                try #require(sawOutput && killed.signalled, "not killed mid-file: \(killed.lines.count) lines, \(killed.stderr)")
                // Only complete lines count as printed: the last one may have been cut by the kill.
                let printed = try IngestResult.all(first.linesSoFar)
                #expect(printed.count < file.lines.count, "the first run finished before it was killed")

                try db.withConnection { c throws in
                    let facts = try LogFacts(c)
                    let missing = try Self.acknowledgedButMissing(printed, types: types, facts: facts, c)
                    #expect(missing.isEmpty, "reported but not in the log: \(missing.prefix(10))")
                }

                let second = try LedgerProcess.run(arguments, timeout: 400)
                #expect(!second.signalled && !second.timedOut && second.status != 2, "\(second.stderr)")
                let rerun = try IngestResult.all(second.lines)
                let nonBlank = file.lines.indices.filter { !file.lines[$0].allSatisfy { $0 == 0x20 || $0 == 0x09 } }
                let mismatch = HostileInput.firstDifference(rerun.map(\.line), nonBlank.map { $0 + 1 })
                #expect(mismatch == nil, "the second run did not finish the file: \(rerun.count) results, first gap at line \(mismatch ?? 0)")

                try db.withConnection { c throws in
                    let facts = try LogFacts(c)
                    #expect(facts.doubled.isEmpty, "\(facts.doubled.prefix(10))")
                    #expect(facts.consumedAfterRefund.isEmpty)
                    let missing = try Self.acknowledgedButMissing(printed + rerun, types: types, facts: facts, c)
                    #expect(missing.isEmpty, "reported but not in the log: \(missing.prefix(10))")
                    // No payment was reported recorded by both runs; the log holds exactly what the
                    // two runs reported, plus at most the one batch that committed as the first died.
                    let firstRecorded = Set(Races.recordedMentions([printed], types: types).keys)
                    let secondRecorded = Set(Races.recordedMentions([rerun], types: types).keys)
                    #expect(firstRecorded.isDisjoint(with: secondRecorded))
                    let unreported = Set(facts.records.keys).subtracting(firstRecorded).subtracting(secondRecorded)
                    #expect(unreported.count <= 200, "\(unreported.count) payments in the log that no run reported")
                    let replay = try ProjectionReplay.compare(c)
                    #expect(replay.differences.isEmpty, "\(replay.differences)")
                }
            }
        }

        static let purchasesPerWriter = 1500
        /// Each writer's batch with this purchase is in flight when the server goes down.
        static let blockedPurchase = 500

        @Test func immediateShutdownUnderFourWritersLosesNoAcknowledgedEvent() async throws {
            let dir = try ScratchDirectory()
            defer { dir.remove() }
            // Writers 0 and 1 only record purchases: idempotent batches, retried through the restart.
            // Writers 2 and 3 also consume: a batch lost with its connection is not retried.
            let inputs = (0..<4).map { writer in
                let lines = (0..<Self.purchasesPerWriter).flatMap { i -> [String] in
                    let seq = "W\(writer)-\(i)"
                    return writer < 2 ? [ContractLines.purchase(seq)] : [ContractLines.purchase(seq), ContractLines.consume(seq)]
                }
                let path = dir.file("writer\(writer).ndjson")
                FileManager.default.createFile(atPath: path, contents: Data(ContractLines.file(lines).utf8))
                return (path: path, types: NDJSONFile(lines: lines).types, lines: lines.count)
            }
            try await PrivateCluster.with { cluster in
                // Hold the lock that recording W<n>-500 takes, so that every writer has written
                // and acknowledged what comes before it and has its next batch open in the
                // database when the server goes down (pg_ctl stop -m immediate: as in a crash).
                let holder = try cluster.connect()
                try holder.executeScript(unsafeSQL: "BEGIN")
                for writer in 0..<4 {
                    try holder.query("SELECT pg_advisory_xact_lock(hashtextextended(\("payment:W\(writer)-\(Self.blockedPurchase)"), 0))")
                }
                let writers = try inputs.map {
                    try LedgerProcess.start(["ingest", $0.path, "--batch-size", "20", "--database-url", cluster.conninfo])
                }
                let waiting = Result { try LockWaiters.wait(count: 4, besides: [holder.serverProcessID], blockedBy: holder.serverProcessID, timeout: 180) { try cluster.connect() } }
                let printedBeforeCrash = writers.map { $0.linesSoFar.count }
                try cluster.stopImmediately()
                holder.close()
                try cluster.start()
                let outputs = writers.map { $0.wait(timeout: 300) }
                _ = try waiting.get()
                #expect(printedBeforeCrash == [500, 500, 1000, 1000], "acknowledged before the crash")

                for (index, out) in outputs.enumerated() {
                    #expect(!out.signalled && !out.timedOut, "writer \(index) crashed or hung")
                    if index < 2 {
                        // Its lost batch was sent again on a new connection, and it went on to the end.
                        #expect(out.status == 0, "writer \(index) gave up: \(out.stderr)")
                        #expect(out.lines.count == inputs[index].lines, "writer \(index) printed \(out.lines.count) results")
                    } else {
                        // Its lost batch held consumes: not sent again, and nothing printed for it.
                        #expect(out.status == 2 && out.stderr.split(separator: "\n").count == 1, "writer \(index): \(out.status) \(out.stderr)")
                        #expect(out.lines.count == 1000, "writer \(index) printed \(out.lines.count) results")
                    }
                }
                let connection = try cluster.connect()
                defer { connection.close() }
                let facts = try LogFacts(connection)
                for (index, out) in outputs.enumerated() {
                    let results = try IngestResult.all(out.lines)
                    #expect(results.map(\.line) == Array(1..<(results.count + 1)), "writer \(index) skipped lines")
                    let missing = try Self.acknowledgedButMissing(results, types: inputs[index].types, facts: facts, connection)
                    #expect(missing.isEmpty, "writer \(index): acknowledged but lost: \(missing.prefix(10))")
                }
                #expect(facts.records["W2-\(Self.blockedPurchase)"] == nil && facts.records["W3-\(Self.blockedPurchase)"] == nil,
                        "the batch open at the crash was committed")
                #expect(facts.doubled.isEmpty, "\(facts.doubled.prefix(10))")
                #expect(facts.events == 2 * Self.purchasesPerWriter + 2 * 1000)
                let replay = try ProjectionReplay.compare(connection)
                #expect(replay.differences.isEmpty, "\(replay.differences)")
            }
        }

        /// The results that said something was written (`recorded`, `consumed`, `restored`) whose
        /// event is not in the log.
        static func acknowledgedButMissing(_ results: [IngestResult], types: [String?], facts: LogFacts,
                                           _ connection: Connection) throws -> [String] {
            var missing: [String] = []
            let cancels = Set(try connection.query("""
                SELECT data->>'originalTransactionId' AS lineage FROM ledger.events
                 WHERE type = 'AutoRenewCancelled'
                """).map { try $0.decode("lineage", as: String.self) })
            for result in results {
                let type = result.line - 1 < types.count ? types[result.line - 1] : nil
                let seq = result.paymentSeq ?? ""
                switch (result.status, type) {
                case ("recorded", "purchase"), ("recorded", "renewal"):
                    if facts.records[seq] != 1 { missing.append("line \(result.line): \(seq) recorded") }
                case ("recorded", "refund"):
                    if facts.refunds[seq] != 1 { missing.append("line \(result.line): \(seq) refunded") }
                case ("recorded", "cancel"):
                    if !cancels.contains(result.originalTransactionId ?? "") { missing.append("line \(result.line): cancel") }
                case ("consumed", _):
                    if facts.consumes[seq] != 1 { missing.append("line \(result.line): \(seq) consumed") }
                case ("restored", _):
                    for seq in result.recorded where facts.records[seq] != 1 {
                        missing.append("line \(result.line): \(seq) restored")
                    }
                default: break
                }
            }
            return missing
        }
    }
}
