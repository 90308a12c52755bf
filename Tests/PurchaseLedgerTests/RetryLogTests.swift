import Foundation
import LedgerTestSupport
import Logging
import Postgres
import PurchaseLedger
import Testing

/// What an operator must see is logged through the logger the caller gives: a batch that ran
/// again on a new connection after the server dropped the old one, without the values of its
/// commands.
@Suite("Retry logs")
struct RetryLogTests {
    @Test func aBatchRunAgainAfterALostConnectionIsLoggedWithoutItsValues() async throws {
        try await TestDatabase.with { db in
            let capture = LogCapture()
            let killer = try db.connect(), first = try db.connect()
            defer { killer.close() }
            var handedFirst = false
            var ingestor = Ingestor(logger: capture.logger()) {
                if !handedFirst {
                    handedFirst = true
                    return first
                }
                return try db.connect()
            }
            // The ingestor's first batch asks, on its first connection, which way the ledger
            // takes commands (CommandRouting); then the server ends that connection before the
            // next batch sends anything.
            var declaration = ArrayLines([#"{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE"}"#])
            _ = try ingestor.run(&declaration, report: { _ in })
            try killer.query("SELECT pg_terminate_backend(\(first.serverProcessID), 10000)")
            var lines = ArrayLines([Fixture.purchaseLine()])
            var outcomes: [CommandOutcome] = []
            let summary = try ingestor.run(&lines, report: { outcomes.append($0.outcome) })

            #expect(outcomes.map(\.status) == [.recorded])
            #expect(summary.retries == 1)
            let records = capture.records
            #expect(records.count == 1)
            let record = try #require(records.first)
            #expect(record.level == .warning)
            #expect(record.message.contains("connection to PostgreSQL was lost"))
            #expect(record.metadata["attempt"] == "2" && record.metadata["commands"] == "1")
            let text = records.map { "\($0.message) \($0.metadata)" }.joined()
            #expect(!text.contains("tok-1") && !text.contains("P-1") && !text.contains("u1"), "\(text)")
        }
    }

    @Test func withoutALoggerNothingIsLogged() throws {
        // The default is swift-log's no-op handler: a library in a test prints nothing.
        let ingestor = Ingestor { throw TestSetupError("not connected") }
        #expect(ingestor.logger.handler is SwiftLogNoOpLogHandler)
    }
}
