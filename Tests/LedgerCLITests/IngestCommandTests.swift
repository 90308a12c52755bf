import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("ledger ingest and the queries, as a process")
struct IngestCommandTests {
    @Test func ingestPrintsOneResultPerLineAndExitsOneOnRefusals() async throws {
        try await TestDatabase.with { db in
            let input = [
                Fixture.purchaseLine(),
                "",
                "{not json",
                "{\"type\":\"consume\",\"userId\":\"u1\",\"paymentSeq\":\"P-1\",\"purchaseToken\":\"tok-1\",\"time\":\"2026-01-01T00:05:00Z\"}",
                "{\"type\":\"consume\",\"userId\":\"u1\",\"paymentSeq\":\"P-1\",\"purchaseToken\":\"tok-1\"}",
            ].joined(separator: "\n") + "\n"
            let out = try LedgerProcess.run(["ingest", "-", "--database-url", db.conninfo], input: input)
            #expect(out.status == 1, "\(out.stderr)")
            let results = try out.lines.map(jsonObject)
            #expect(results.count == 4)
            #expect(results.map { $0["line"] as? Int } == [1, 3, 4, 5])
            #expect(results.map { $0["status"] as? String } == ["recorded", "rejected", "consumed", "alreadyConsumed"])
            #expect(results[0]["paymentSeq"] as? String == "P-1")
            #expect((results[1]["error"] as? [String: Any])?["code"] as? String == "INVALID_INPUT")
            #expect(results[3]["consumedAt"] as? String == "2026-01-01T00:05:00.000Z")

            let clean = try LedgerProcess.run(["ingest", "--database-url", db.conninfo], input: Fixture.purchaseLine() + "\n")
            #expect(clean.status == 0 && clean.lines.count == 1 && clean.stdout.contains("\"duplicate\""))
        }
    }

    @Test func queriesPrintJSONForProgramsAndTablesForPeople() async throws {
        try await TestDatabase.with { db in
            _ = try LedgerProcess.run(["ingest", "--database-url", db.conninfo], input: Fixture.purchaseLine(["payload": "\"character-7\""]) + "\n")
            let json = try LedgerProcess.run(["unconsumed", "--user", "u1", "--json", "--database-url", db.conninfo])
            #expect(json.status == 0)
            let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(array.count == 1)
            let keys = ["userId", "storeCode", "productId", "productType", "price", "currency", "paymentSeq", "transactionId",
                        "originalTransactionId", "purchaseTime", "expiryTime", "payload", "sandboxPayment", "promotionPayment"]
            #expect(Set(array[0].keys) == Set(keys))
            #expect(array[0]["price"] as? String == "0.99" && array[0]["purchaseTime"] as? String == "2026-01-01T00:00:00.000Z")
            let table = try LedgerProcess.run(["unconsumed", "--user", "u1", "--database-url", db.conninfo])
            #expect(table.status == 0 && table.stdout.contains("paymentSeq") && table.stdout.contains("0.99 USD"))
            let subs = try LedgerProcess.run(["subscriptions", "--user", "u1", "--json", "--database-url", db.conninfo])
            #expect(subs.status == 0 && subs.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        }
    }

    @Test(arguments: [["unconsumed"], ["subscriptions", "--user", "u1", "--at", "tomorrow"], ["ingest", "/no/such/file.ndjson"], ["frobnicate"], ["unconsumed", "--user", "u1", "--store", "XX"]])
    func usageErrorsExitTwoWithOneLine(arguments: [String]) throws {
        let out = try LedgerProcess.run(arguments + ["--database-url", "host=/nonexistent"])
        #expect(out.status == 2, "\(arguments): \(out.stderr)")
        #expect(!out.stderr.isEmpty)
    }

    @Test func anUnreachableDatabaseExitsTwoWithoutShowingThePassword() throws {
        let out = try LedgerProcess.run(["unconsumed", "--user", "u1", "--database-url", "postgresql://ledger:s3cretPW@127.0.0.1:1/nodb"])
        #expect(out.status == 2)
        #expect(out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
        #expect(!out.stderr.contains("s3cretPW"))
        let ingest = try LedgerProcess.run(["ingest", "-", "--database-url", "postgresql://ledger:s3cretPW@127.0.0.1:1/nodb"], input: Fixture.purchaseLine())
        #expect(ingest.status == 2 && !ingest.stderr.contains("s3cretPW") && ingest.stdout.isEmpty)
    }

    @Test func consumesFromEightProcessesHandTheGoodsOutOnce() async throws {
        try await TestDatabase.with { db in
            _ = try LedgerProcess.run(["ingest", "--database-url", db.conninfo], input: Fixture.purchaseLine() + "\n")
            let consume = "{\"type\":\"consume\",\"userId\":\"u1\",\"paymentSeq\":\"P-1\",\"purchaseToken\":\"tok-1\"}\n"
            // Eight processes, eight consumes each, one line per transaction.
            let processes = try (0..<8).map { _ in
                try LedgerProcess.start(["ingest", "-", "--batch-size", "1", "--database-url", db.conninfo],
                                        input: String(repeating: consume, count: 8))
            }
            let statuses = try processes.map { $0.wait() }.flatMap { out in
                try out.lines.map { try jsonObject($0)["status"] as? String }
            }
            #expect(statuses.count == 64)
            #expect(statuses.filter { $0 == "consumed" }.count == 1)
            #expect(statuses.filter { $0 == "alreadyConsumed" }.count == 63)
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentConsumed'") == 1)
            }
        }
    }

    @Test func fourMigrateProcessesAtOnceLeaveOneAppliedCopy() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let processes = try (0..<4).map { _ in try LedgerProcess.start(["migrate", "--database-url", db.conninfo]) }
            let outputs = processes.map { $0.wait() }
            #expect(outputs.allSatisfy { $0.status == 0 }, "\(outputs.map(\.stderr))")
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.schema_migrations") == Migration.all.count)
            }
        }
    }
}
