import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("ledger --version, the queries' --user and progress, as a process")
struct QueryCommandTests {
    @Test func versionPrintsTheReleaseAndTheSchemaItMigratesTo() throws {
        let out = try LedgerProcess.run(["--version"])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        #expect(out.stdout == LedgerVersion.description + "\n")
        #expect(out.stdout.hasPrefix(LedgerVersion.release + " (schema "))
        #expect(LedgerVersion.schema == Migration.all.last?.version)
        #expect(out.stdout.contains(", \(LedgerVersion.schemaFingerprint.prefix(12)))"))
    }

    /// Empty, one character too long, and 100,000 characters (which the error must not repeat).
    @Test(arguments: ["", String(repeating: "x", count: 129), String(repeating: "u", count: 100_000)])
    func aUserIdTheContractRefusesIsAUsageErrorNamingUser(user: String) async throws {
        try await TestDatabase.with { db in
            for command in [["unconsumed"], ["subscriptions"], ["subscriptions", "--json", "--include-expired"], ["history"]] {
                let out = try LedgerProcess.run(command + ["--user", user, "--database-url", db.conninfo])
                #expect(out.status == 2, "\(command): \(out.stderr.prefix(200))")
                #expect(out.stdout.isEmpty, "\(command) printed \(out.stdout.count) characters")
                #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains("--user"), "\(out.stderr.prefix(200))")
                #expect(out.stderr.count < 1000, "the error repeats the user ID")
            }
            let longest = String(repeating: "é", count: 128)
            let ok = try LedgerProcess.run(["unconsumed", "--user", longest, "--json", "--database-url", db.conninfo])
            #expect(ok.status == 0 && ok.stdout == "[]\n", "\(ok.stderr)")
        }
    }

    /// Without a terminal: the final line once, at 100%, last, with the count actually written
    /// (`--events` is approximate): never 100% twice, nor a count past the total (4106/4096).
    @Test(arguments: [100, 1024, 4096, 5000])
    func progressWithoutATerminalPrintsOneFinalLineAt100Percent(events: Int) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID().uuidString).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let out = try LedgerProcess.run(["demo", "--write", file, "--events", String(events)])
        #expect(out.status == 0, "\(out.stderr)")
        let written = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").count
        let lines = out.stderr.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains("100%") }.count == 1, "\(lines)")
        #expect(lines.last?.contains("\(written)/\(written) lines (100%)") == true, "\(lines)")
        #expect(lines.last?.contains("done in") == true)
        #expect(lines.allSatisfy { !$0.contains("\u{1B}") && !$0.contains("\r") })
    }
}
