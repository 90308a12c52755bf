import Foundation
import LedgerTestSupport
import Testing

/// `ledger lookup` and `ledger events`, as a process: the library's lookup and feed for people
/// at a terminal and for scripts.
@Suite("ledger lookup and ledger events, as a process")
struct FeedCommandTests {
    static let lines = [
        Fixture.purchaseLine(["paymentSeq": "\"P-1\""]),
        Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "userId": "\"u2\"", "storeCode": "\"GG\"", "transactionId": "\"GPA.1\"",
                              "purchaseToken": "\"tok-2\""]),
        #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1","time":"2026-01-03T00:00:00Z"}"#,
    ]

    @Test func lookupAnswersThePaymentByNameTransactionOrOrderAndExits1WhenThereIsNone() async throws {
        try await TestDatabase.with { db in
            _ = try db.withConnection { try $0.ingest(Self.lines) }
            let url = ["--database-url", db.conninfo]
            let byName = try LedgerProcess.run(["lookup", "--payment-seq", "P-1", "--json"] + url)
            #expect(byName.status == 0, "\(byName.stderr)")
            let json = try jsonObject(byName.stdout)
            #expect(json["userId"] as? String == "u1" && json["consumedAt"] as? String == "2026-01-03T00:00:00.000Z")
            #expect(try LedgerProcess.run(["lookup", "--store", "AS", "--transaction-id", "T-1", "--json"] + url).stdout == byName.stdout)
            let byOrder = try LedgerProcess.run(["lookup", "--order-id", "GPA.1"] + url)
            #expect(byOrder.status == 0 && byOrder.lines.contains { $0.hasPrefix("user ") && $0.hasSuffix(" u2") }, "\(byOrder.stdout)")

            let none = try LedgerProcess.run(["lookup", "--payment-seq", "P-9"] + url)
            #expect(none.status == 1 && none.stdout.isEmpty && none.stderr == "ledger: NOT_FOUND: no payment P-9\n")
            for (arguments, option) in [(["--transaction-id", "T-1"], "--store"), ([], "--payment-seq"),
                                        (["--payment-seq", "P-1", "--order-id", "GPA.1"], "--payment-seq")] {
                let bad = try LedgerProcess.run(["lookup"] + arguments + url)
                #expect(bad.status == 2 && bad.stderr.contains(option + ":"), "\(arguments): \(bad.stderr)")
            }
        }
    }

    @Test func lookupReadsAGooglePurchaseTokenFromStandardInputOnly() async throws {
        try await TestDatabase.with { db in
            _ = try db.withConnection { try $0.ingest(Self.lines) }
            let url = ["--database-url", db.conninfo]
            let byToken = try LedgerProcess.run(["lookup", "--purchase-token-stdin", "--json"] + url, input: "tok-2\n")
            #expect(byToken.status == 0, "\(byToken.stderr)")
            #expect(byToken.stdout == (try LedgerProcess.run(["lookup", "--order-id", "GPA.1", "--json"] + url)).stdout)
            #expect(!byToken.stdout.contains("tok-2"))

            let other = try LedgerProcess.run(["lookup", "--purchase-token-stdin"] + url, input: "tok-9\n")
            #expect(other.status == 1 && other.stderr == "ledger: NOT_FOUND: no payment with the given purchase token on store GG\n")
            // An App Store payment's token (tok-1) is not looked up: its transaction id is.
            let apple = try LedgerProcess.run(["lookup", "--purchase-token-stdin", "--store", "AS"] + url, input: "tok-1\n")
            #expect(apple.status == 2 && apple.stderr.contains("--store:") && !apple.stderr.contains("tok-1"), "\(apple.stderr)")
            let empty = try LedgerProcess.run(["lookup", "--purchase-token-stdin"] + url, input: "")
            #expect(empty.status == 2 && empty.stderr.contains("--purchase-token-stdin: expected 1 to 4096 characters"), "\(empty.stderr)")
        }
    }

    @Test func eventsPrintsAPageAndFollowPrintsWhatIsAppendedAfterItStarted() async throws {
        try await TestDatabase.with { db in
            _ = try db.withConnection { try $0.ingest(Self.lines) }
            let url = ["--database-url", db.conninfo]
            let positions = try db.withConnection { c in
                try c.query("SELECT position FROM ledger.events ORDER BY tx, position").map { try $0.decode(0, as: Int64.self) }
            }
            try #require(positions.count == 3)
            // The reader's horizon is the whole test server's: another suite's write transaction
            // (CancellationTests hold one through a 60 s sleep when their cancel comes late) holds
            // the events back meanwhile, so the page is asked again until they are final.
            var page = try LedgerProcess.run(["events", "--limit", "2", "--json"] + url)
            let deadline = Date().addingTimeInterval(600)
            while page.lines.count < 2, Date() < deadline {
                try await Task.sleep(for: .milliseconds(100))
                page = try LedgerProcess.run(["events", "--limit", "2", "--json"] + url)
            }
            #expect(page.status == 0, "\(page.stderr)")
            #expect(try page.lines.map { try jsonObject($0)["position"] as? Int } == positions.prefix(2).map { Int($0) })
            var rest = try LedgerProcess.run(["events", "--after", String(positions[1])] + url)
            while !rest.lines.contains(where: { $0.contains("PaymentConsumed") }), Date() < deadline {
                try await Task.sleep(for: .milliseconds(100))
                rest = try LedgerProcess.run(["events", "--after", String(positions[1])] + url)
            }
            #expect(rest.lines.last == "next: --after \(positions[2])", "\(rest.stdout)")
            #expect(rest.lines.contains { $0.hasPrefix("\(positions[2]) ") && $0.contains("PaymentConsumed") })
            let unknown = try LedgerProcess.run(["events", "--after", "424242"] + url)
            #expect(unknown.status == 2 && unknown.stderr.contains("--after: no event has position 424242"), "\(unknown.stderr)")

            let follower = try LedgerProcess.start(["events", "--follow", "--json", "--after", String(positions[2])] + url)
            defer { follower.kill() }
            _ = try db.withConnection {
                try $0.ingest([Fixture.purchaseLine(["paymentSeq": "\"P-3\"", "transactionId": "\"T-3\"", "purchaseToken": "\"tok-3\""])])
            }
            let printed = follower.waitForOutput(timeout: 600) { $0.contains { $0.contains("\"stream\":\"payment:P-3\"") } }
            #expect(printed, "printed: \(follower.linesSoFar)")
            #expect(follower.linesSoFar.count == 1)
        }
    }
}
