import Foundation
import LedgerTestSupport
import Testing

/// `ledger history`, as a process: a user's history for people at a terminal and for scripts,
/// the answer of `GET /v1/users/{userId}/history`.
@Suite("ledger history, as a process")
struct HistoryCommandTests {
    static let lines = [
        Fixture.purchaseLine(["paymentSeq": "\"P-1\""]),
        Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "userId": "\"u2\"", "transactionId": "\"T-2\"", "purchaseToken": "\"tok-2\""]),
        #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1","time":"2026-01-03T00:00:00Z"}"#,
        #"{"type":"refund","paymentSeq":"P-1","time":"2026-01-04T00:00:00Z","reason":"chargeback"}"#,
    ]

    @Test func historyPrintsTheUsersEventsAsATimelineOrAsJSON() async throws {
        try await TestDatabase.with { db in
            _ = try db.withConnection { try $0.ingest(Self.lines) }
            let url = ["--database-url", db.conninfo]
            let json = try LedgerProcess.run(["history", "--user", "u1", "--json"] + url)
            #expect(json.status == 0 && json.lines.count == 1, "\(json.stderr)")
            let history = try jsonObject(json.stdout)
            let entries = try #require(history["entries"] as? [[String: Any]])
            #expect(entries.map { $0["change"] as? String } == ["recorded", "consumed", "refunded"])
            #expect(entries.map { $0["occurredAt"] as? String }
                    == ["2026-01-01T00:00:00.000Z", "2026-01-03T00:00:00.000Z", "2026-01-04T00:00:00.000Z"])
            #expect(history["truncated"] as? Bool == false && !json.stdout.contains("tok-"))

            let text = try LedgerProcess.run(["history", "--user", "u1"] + url)
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.lines.first?.hasPrefix("occurred (UTC)") == true, "\(text.stdout)")
            #expect(text.lines.contains { $0.hasPrefix("2026-01-04T00:00:00.000Z") && $0.contains("P-1 refunded (chargeback)") },
                    "\(text.stdout)")
            #expect(!text.stdout.contains("P-2"))
            let limited = try LedgerProcess.run(["history", "--user", "u1", "--limit", "1"] + url)
            #expect(limited.status == 0 && limited.stdout.contains("refunded") && !limited.stdout.contains("consumed"))
            #expect(limited.lines.last?.hasPrefix("older events left out") == true, "\(limited.stdout)")

            let unknown = try LedgerProcess.run(["history", "--user", "nobody"] + url)
            #expect(unknown.status == 0 && unknown.stdout == "(no history for nobody)\n", "\(unknown.stdout)")
            let unknownJSON = try LedgerProcess.run(["history", "--user", "nobody", "--json"] + url)
            #expect(unknownJSON.stdout == #"{"entries":[],"truncated":false}"# + "\n")
        }
    }

    @Test(arguments: [(["--limit", "0"], "--limit"), (["--limit", "10001"], "--limit"), (["--limit", "x"], "--limit"),
                      (["--bogus"], "--bogus"), ([], "--user")])
    func aBadOptionExits2NamingIt(arguments: [String], option: String) async throws {
        try await TestDatabase.with { db in
            let user = arguments.isEmpty ? [] : ["--user", "u1"]
            let out = try LedgerProcess.run(["history"] + user + arguments + ["--database-url", db.conninfo])
            #expect(out.status == 2 && out.stdout.isEmpty && out.stderr.contains(option), "\(out.stderr)")
        }
    }
}
