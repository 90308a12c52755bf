import Foundation
import LedgerTestSupport
import Postgres
import Testing

extension HeavyReliabilityTests {
    @Suite("Hostile input to ledger ingest")
    struct HostileInput {
        static let codes: Set<String> = ["INVALID_INPUT", "UNKNOWN_STORE", "UNKNOWN_PRODUCT_TYPE", "USER_INVALID",
                                         "PRODUCT_INVALID", "PAYMENT_CONFLICT", "NOT_FOUND", "TOKEN_INVALID",
                                         "NOT_CONSUMABLE", "REFUNDED", "SIGNATURE_INVALID", "APP_MISMATCH"]

        @Test func aHundredThousandHostileLinesNeverCrashOrHangIngestAndRefusedLinesWriteNothing() async throws {
            let corpus = HostileLines(seed: 0x1ED6E5, count: 100_000)
            #expect(corpus.lines.count >= 100_000)
            let dir = try ScratchDirectory()
            defer { dir.remove() }
            let input = dir.file("hostile.ndjson")
            var data = Data()
            for line in corpus.lines {
                data.append(contentsOf: line)
                data.append(0x0A)
            }
            try data.write(to: URL(fileURLWithPath: input))

            try await TestDatabase.with { db in
                let out = try LedgerProcess.run(["ingest", input, "--database-url", db.conninfo], timeout: 400)
                #expect(!out.timedOut, "ingest hung")
                #expect(!out.signalled, "ingest crashed")
                #expect(out.status == 1 && out.stderr.isEmpty, "exit \(out.status): \(out.stderr)")
                let results = try IngestResult.all(out.lines)

                // Every non-blank line, and only those, got one result, in order, with its number.
                let expectedLines = corpus.expectations.indices.filter { corpus.expectations[$0] != .blank }.map { $0 + 1 }
                let mismatch = Self.firstDifference(results.map(\.line), expectedLines)
                #expect(mismatch == nil, "\(results.count) results for \(expectedLines.count) non-blank lines; first difference at line \(mismatch ?? 0)")

                var problems: [String] = []
                for result in results where result.line >= 1 && result.line <= corpus.expectations.count {
                    let expectation = corpus.expectations[result.line - 1]
                    switch expectation {
                    case .status(let status) where result.status != status:
                        problems.append("line \(result.line): \(result.status) \(result.message ?? ""), expected \(status)")
                    case .refused(let code, let field):
                        if result.status != "rejected" || result.code != code
                            || !(field.map { result.message?.contains($0) ?? false } ?? true) {
                            problems.append("line \(result.line): \(result.status) \(result.code ?? "") \(result.message ?? ""), expected \(code) naming \(field ?? "-")")
                        }
                    default: break
                    }
                    if result.status == "rejected" {
                        if !Self.codes.contains(result.code ?? "") || (result.message ?? "").isEmpty {
                            problems.append("line \(result.line): refusal without a contract code or message")
                        }
                        if (result.message ?? "").utf8.count > 1000 {
                            problems.append("line \(result.line): a message of \(result.message!.utf8.count) bytes")
                        }
                    }
                }
                #expect(problems.isEmpty, "\(problems.count) lines: \(problems.prefix(15))")
                // (A restore lists every subscription payment of its user: that line may be long.)
                #expect(out.stdout.split(separator: "\n").allSatisfy { $0.utf8.count < 2000 || $0.contains("\"restored\"") },
                        "an output line echoes its input")

                // A refused line writes nothing: the log holds exactly the events the results announced.
                let announced = results.reduce(0) { total, result in
                    switch result.status {
                    case "recorded", "consumed": total + 1
                    case "restored": total + 1 + result.recorded.count
                    default: total
                    }
                }
                try db.withConnection { c throws in
                    let facts = try LogFacts(c)
                    #expect(facts.events == announced, "\(facts.events) events, \(announced) announced")
                    #expect(facts.doubled.isEmpty, "\(facts.doubled.prefix(10))")
                    let valid = corpus.expectations.filter { if case .status = $0 { true } else { false } }.count
                    #expect(valid > 4000)
                    let replay = try ProjectionReplay.compare(c)
                    #expect(replay.differences.isEmpty, "\(replay.differences)")
                }
            }
        }

        static func firstDifference(_ a: [Int], _ b: [Int]) -> Int? {
            zip(a, b).first { $0.0 != $0.1 }.map { min($0.0, $0.1) } ?? (a.count == b.count ? nil : min(a.count, b.count))
        }
    }
}
