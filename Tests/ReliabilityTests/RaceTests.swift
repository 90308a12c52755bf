import Foundation
import LedgerTestSupport
import Postgres
import Testing

// 64 concurrent consumes of one payment from 8 `ledger ingest` processes: see
// LedgerCLITests/IngestCommandTests.consumesFromEightProcessesHandTheGoodsOutOnce.
extension HeavyReliabilityTests {
    @Suite("Races between ledger processes")
    struct Races {
        @Test func sixteenProcessesIngestingOneFileRecordEachPaymentOnce() async throws {
            let dir = try ScratchDirectory()
            defer { dir.remove() }
            let demo = dir.file("demo.ndjson")
            let written = try LedgerProcess.run(["demo", "--write", demo, "--events", "10000"])
            try #require(written.status == 0, "\(written.stderr)")

            // A refund the ledger learns of before its payment (which only a later restore brings)
            // is NOT_FOUND alone, but may apply when another process already got further: such
            // lines (a refund, consume or cancel of something no earlier line names) are blanked.
            var file = try NDJSONFile(path: demo)
            var named: Set<String> = []
            for (index, line) in file.lines.enumerated() {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
                let items = [object] + (object["purchases"] as? [[String: Any]] ?? [])
                let names = items.compactMap { $0["paymentSeq"] as? String }
                    + [object["originalTransactionId"] as? String].compactMap { $0 }
                if ["refund", "consume", "cancel"].contains(object["type"] as? String), !names.allSatisfy(named.contains) {
                    file.lines[index] = []
                }
                for item in items {
                    named.formUnion([item["paymentSeq"], item["transactionId"], item["originalTransactionId"]].compactMap { $0 as? String })
                }
            }
            let input = dir.file("input.ndjson")
            try file.write(to: input)
            let types = file.types

            // One process alone, on a database of its own, gives every line's expected result;
            // sixteen more ingest the same file at once into another database.
            try await TestDatabase.with { ref in
                try await TestDatabase.with { db in
                    try Self.ingestAtOnce(input: input, types: types, alone: ref, together: db)
                }
            }
        }

        /// Runs the file once on `alone` and sixteen times at once on `together`, and compares.
        static func ingestAtOnce(input: String, types: [String?], alone ref: TestDatabase, together db: TestDatabase) throws {
            let alone = try LedgerProcess.start(["ingest", input, "--database-url", ref.conninfo])
            let processes = try (0..<16).map { _ in try LedgerProcess.start(["ingest", input, "--database-url", db.conninfo]) }
            let outputs = processes.map { $0.wait(timeout: 500) }
            let single = alone.wait(timeout: 500)
            try #require(!single.timedOut && !single.signalled && single.status != 2, "\(single.stderr)")
            let expected = Dictionary(uniqueKeysWithValues: try IngestResult.all(single.lines).map { ($0.line, $0) })
            #expect(!expected.values.contains { $0.code == "NOT_FOUND" }, "a line depends on a later one")
            let referenceMentions = Self.recordedMentions([Array(expected.values)], types: types)
            for out in outputs {
                #expect(!out.timedOut && !out.signalled && out.status == single.status, "\(out.status) \(out.stderr)")
            }
            let runs = try outputs.map { try IngestResult.all($0.lines) }
            var byLine: [Int: [IngestResult]] = [:]
            for run in runs { for result in run { byLine[result.line, default: []].append(result) } }

            var problems: [String] = []
            for (number, want) in expected.sorted(by: { $0.key < $1.key }) {
                let got = byLine[number] ?? []
                let statuses = got.map(\.status)
                func count(_ status: String) -> Int { statuses.filter { $0 == status }.count }
                let ok: Bool
                switch want.status {
                case "recorded": ok = count("recorded") == 1 && count("duplicate") == 15
                case "consumed":
                    ok = count("consumed") == 1 && count("alreadyConsumed") == 15
                        && got.allSatisfy { $0.consumedAt == want.consumedAt }
                case "rejected": ok = got.count == 16 && got.allSatisfy { $0.code == want.code }
                default: ok = got.count == 16 && count(want.status) == 16
                }
                if !ok { problems.append("line \(number): alone \(want.status) \(want.code ?? ""), at once \(statuses)") }
            }
            #expect(problems.isEmpty, "\(problems.count) lines: \(problems.prefix(10))")
            #expect(byLine.count == expected.count, "results for \(byLine.count) lines, expected \(expected.count)")

            // Each payment was recorded once, by exactly one line of one process.
            let mentions = Self.recordedMentions(runs, types: types)
            #expect(mentions.filter { $0.value != 1 }.isEmpty, "\(mentions.filter { $0.value != 1 }.prefix(10))")
            #expect(Set(mentions.keys) == Set(referenceMentions.keys))
            try db.withConnection { c throws in
                let facts = try LogFacts(c)
                #expect(facts.doubled.isEmpty, "\(facts.doubled.prefix(10))")
                #expect(Set(facts.records.keys) == Set(referenceMentions.keys))
                let replay = try ProjectionReplay.compare(c)
                #expect(replay.differences.isEmpty, "\(replay.differences)")
            }
        }

        @Test func racingPurchasesRefundsAndConsumesLeaveProjectionsEqualToTheLog() async throws {
            let n = 300
            let seqs = (0..<n).map { "P-\($0)" }
            let inputs = [
                seqs.map { ContractLines.purchase($0) },
                seqs.map { ContractLines.consume($0) },
                seqs.reversed().map { ContractLines.refund($0) },
                seqs.map { ContractLines.refund($0, time: "2026-01-04T00:00:00Z") },
            ]
            try await TestDatabase.with { db in
                let processes = try inputs.map {
                    try LedgerProcess.start(["ingest", "-", "--batch-size", "1", "--database-url", db.conninfo],
                                            input: ContractLines.file($0))
                }
                let outputs = processes.map { $0.wait(timeout: 300) }
                for out in outputs { #expect(!out.timedOut && !out.signalled && out.status != 2, "\(out.stderr)") }
                let runs = try outputs.map { try IngestResult.all($0.lines) }
                #expect(runs.map(\.count) == [n, n, n, n])
                try db.withConnection { c throws in
                    let facts = try LogFacts(c)
                    #expect(seqs.allSatisfy { facts.records[$0] == 1 })
                    #expect(facts.doubled.isEmpty, "\(facts.doubled.prefix(10))")
                    #expect(facts.consumedAfterRefund.isEmpty, "consumed after a refund: \(facts.consumedAfterRefund.prefix(10))")
                    #expect(runs[0].allSatisfy { $0.status == "recorded" })
                    for result in runs[1] {
                        let seq = result.paymentSeq ?? "?"
                        if result.status == "consumed" {
                            #expect(facts.consumes[seq] == 1)
                        } else {
                            #expect(result.code == "NOT_FOUND" || result.code == "REFUNDED", "\(seq): \(result.status) \(result.code ?? "")")
                            #expect(facts.consumes[seq] == nil, "\(seq) consumed although the consume was refused")
                        }
                    }
                    let refundResults = runs[2] + runs[3]
                    #expect(refundResults.allSatisfy { ["recorded", "duplicate"].contains($0.status) || $0.code == "NOT_FOUND" })
                    for seq in seqs {
                        let recorded = refundResults.filter { $0.paymentSeq == seq && $0.status == "recorded" }.count
                        #expect(recorded == facts.refunds[seq, default: 0], "\(seq): \(recorded) refunds reported")
                    }
                    let replay = try ProjectionReplay.compare(c)
                    #expect(replay.tables.contains("payments"))
                    #expect(replay.differences.isEmpty, "\(replay.differences)")
                }
            }
        }

        @Test func racingRestoresAndRenewalsOfOneLineageRecordEachPaymentOnce() async throws {
            let lineages = (0..<8).map { (id: "L-\($0)", user: "u-\($0)", type: $0 % 2 == 0 ? "AUTO_RENEWABLE" : "CONSUMABLE_AUTO_RENEWABLE") }
            let payments = 6
            // Renewals first, the first purchase last (stores deliver out of order); two restores of
            // the same payments in opposite orders; consumes and cancels beside them.
            let renewals = lineages.flatMap { l in
                (0..<payments).reversed().map { ContractLines.renewalOrPurchase(lineage: l.id, index: $0, user: l.user, type: l.type) }
            }
            func restore(_ order: [Int]) -> [String] {
                lineages.map { l in
                    ContractLines.restore(user: l.user, items: order.map {
                        ContractLines.subscriptionPayment(lineage: l.id, index: $0, user: l.user, type: l.type).fields
                    })
                }
            }
            let others = lineages.flatMap { l in
                (0..<payments).map { ContractLines.consume("\(l.id)-\($0)", user: l.user, time: "2026-02-01T00:00:00Z") }
                    + [ContractLines.cancel(original: l.id, time: "2026-01-02T00:00:00Z")]
            }
            let inputs = [renewals, restore(Array(0..<payments)), restore((0..<payments).reversed()), others]
            try await TestDatabase.with { db in
                let processes = try inputs.map {
                    try LedgerProcess.start(["ingest", "-", "--batch-size", "1", "--database-url", db.conninfo],
                                            input: ContractLines.file($0))
                }
                let outputs = processes.map { $0.wait(timeout: 300) }
                for out in outputs { #expect(!out.timedOut && !out.signalled && out.status != 2, "\(out.stderr)") }
                let runs = try outputs.map { try IngestResult.all($0.lines) }
                #expect(runs.map(\.count) == inputs.map(\.count))
                #expect(runs[0].allSatisfy { $0.status == "recorded" || $0.status == "duplicate" }, "\(runs[0].filter { $0.status == "rejected" }.map { $0.message ?? "" })")
                #expect((runs[1] + runs[2]).allSatisfy { $0.status == "restored" }, "\((runs[1] + runs[2]).compactMap(\.message))")
                let mentions = Self.recordedMentions([runs[0]], types: NDJSONFile(lines: renewals).types)
                    .merging(Self.recordedMentions([runs[1], runs[2]], types: []), uniquingKeysWith: +)
                #expect(runs[3].allSatisfy { ["consumed", "recorded", "duplicate"].contains($0.status)
                        || ["NOT_FOUND", "NOT_CONSUMABLE"].contains($0.code) }, "\(runs[3].compactMap(\.message))")
                let all = lineages.flatMap { l in (0..<payments).map { "\(l.id)-\($0)" } }
                #expect(all.allSatisfy { mentions[$0] == 1 }, "\(mentions.filter { $0.value != 1 })")
                try db.withConnection { c throws in
                    let facts = try LogFacts(c)
                    #expect(all.allSatisfy { facts.records[$0] == 1 })
                    #expect(facts.doubled.isEmpty, "\(facts.doubled)")
                    #expect(try c.count("SELECT count(*) FROM ledger.lineages") == lineages.count)
                    #expect(try c.count("SELECT count(*) FROM ledger.lineages WHERE user_id <> 'u-' || substr(original_transaction_id, 3)") == 0)
                    let replay = try ProjectionReplay.compare(c)
                    #expect(replay.differences.isEmpty, "\(replay.differences)")
                }
            }
        }

        /// paymentSeq → how many result lines said they recorded it: a purchase or renewal line
        /// with status `recorded`, or a restore naming it in `recorded`.
        static func recordedMentions(_ runs: [[IngestResult]], types: [String?]) -> [String: Int] {
            var mentions: [String: Int] = [:]
            for run in runs {
                for result in run {
                    let type = result.line - 1 < types.count ? types[result.line - 1] : nil
                    if result.status == "recorded", type == "purchase" || type == "renewal", let seq = result.paymentSeq {
                        mentions[seq, default: 0] += 1
                    }
                    for seq in result.recorded { mentions[seq, default: 0] += 1 }
                }
            }
            return mentions
        }
    }
}
