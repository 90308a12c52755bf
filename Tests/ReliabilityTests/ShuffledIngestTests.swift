import Foundation
import LedgerDemo
import LedgerTestSupport
import Postgres
import Testing

extension HeavyReliabilityTests {
    /// As an operator would try it: six shuffled variants of one demo file, 5% of their purchases
    /// altered (another user or another price), ingested at once into one ledger. Every batch
    /// takes its keys in one global order; without it, half the processes stop with
    /// `SQLSTATE 40P01` and exit 2.
    @Suite("Shuffled concurrent ingests")
    struct ShuffledIngests {
        @Test func sixShuffledIngestsAtOnceFinishEveryLineWithoutADeadlock() async throws {
            let dir = try ScratchDirectory()
            defer { dir.remove() }
            let lines = Array(DemoGenerator(seed: 13, users: 200, maxLines: 2_000))
            var inputs: [String] = []
            for variant in 0..<6 {
                var random = SplitMix64(seed: UInt64(100 + variant))
                var file = NDJSONFile(lines: lines.map { line in
                    guard line.hasPrefix("{\"type\":\"purchase\""), Int.random(in: 0..<20, using: &random) == 0 else { return line }
                    return Bool.random(using: &random)
                        ? line.replacingOccurrences(of: "\"userId\":\"", with: "\"userId\":\"other-")
                        : line.replacingOccurrences(of: "\"price\":\"", with: "\"price\":\"1")
                })
                file.lines.shuffle(using: &random)
                let path = dir.file("variant-\(variant).ndjson")
                try file.write(to: path)
                inputs.append(path)
            }

            try await TestDatabase.with { db in
                let processes = try inputs.map { try LedgerProcess.start(["ingest", $0, "--database-url", db.conninfo]) }
                let outputs = processes.map { $0.wait(timeout: 500) }
                for (variant, out) in outputs.enumerated() {
                    #expect(!out.timedOut && !out.signalled && (out.status == 0 || out.status == 1),
                            "variant \(variant): exit \(out.status), \(out.stderr.suffix(600))")
                    #expect(out.lines.count == lines.count, "variant \(variant): \(out.lines.count) of \(lines.count) lines")
                }
                let verify = try LedgerProcess.run(["verify", "--chain", "--database-url", db.conninfo])
                #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
                // Not one deadlock, not even one retried in silence: the server counts them.
                let server = try TestDatabase.server
                let admin = try Connection.connect(ConnectionConfiguration("\(server) dbname=postgres"))
                defer { admin.close() }
                let deadlocks = try admin.query("SELECT deadlocks FROM pg_stat_database WHERE datname = \(db.name)")[0]
                    .decode("deadlocks", as: Int.self)
                #expect(deadlocks == 0)
            }
        }
    }
}
