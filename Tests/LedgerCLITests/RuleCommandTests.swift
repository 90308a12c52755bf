import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

/// Two rules through `ledger ingest` and the queries: a printed time goes back in as the same
/// instant, and a price of -0 is 0.
@Suite("ledger: printed times go back in, -0 is a price, as a process")
struct RuleCommandTests {
    @Test func whatTheQueriesPrintGoesBackInAsTheSameInstant() async throws {
        try await TestDatabase.with { db in
            let input = [
                Fixture.purchaseLine(["purchaseTime": "\"9999-12-31T23:59:59.999999999Z\""]),
                Fixture.purchaseLine(["paymentSeq": "\"S-1\"", "transactionId": "\"S-1\"", "productType": "\"AUTO_RENEWABLE\"",
                                      "purchaseTime": "\"9999-06-15T12:34:56.789Z\"", "expiryTime": "\"9999-12-31T23:59:59.999Z\""]),
            ].joined(separator: "\n") + "\n"
            let ingest = try LedgerProcess.run(["ingest", "--database-url", db.conninfo], input: input)
            #expect(ingest.status == 0, "\(ingest.stdout) \(ingest.stderr)")

            let first = try jsonArray(try LedgerProcess.run(["unconsumed", "--user", "u1", "--json", "--database-url", db.conninfo]))
            let printed = try #require(first.first?["purchaseTime"] as? String)
            #expect(printed == "9999-12-31T23:59:59.999Z")
            let again = Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "transactionId": "\"T-2\"", "purchaseTime": "\"\(printed)\""])
            #expect(try LedgerProcess.run(["ingest", "--database-url", db.conninfo], input: again + "\n").status == 0)
            let both = try jsonArray(try LedgerProcess.run(["unconsumed", "--user", "u1", "--json", "--database-url", db.conninfo]))
            #expect(both.map { $0["purchaseTime"] as? String } == [printed, printed])

            let at = ["subscriptions", "--user", "u1", "--json", "--include-expired", "--database-url", db.conninfo, "--at"]
            let lineage = try jsonArray(try LedgerProcess.run(at + ["9999-06-15T12:34:56.789Z"]))
            #expect(lineage.first?["purchaseTime"] as? String == "9999-06-15T12:34:56.789Z")
            let expiry = try #require(lineage.first?["expiryTime"] as? String)
            #expect(expiry == "9999-12-31T23:59:59.999Z")
            #expect(lineage.first?["status"] as? String == "active")
            #expect(try jsonArray(try LedgerProcess.run(at + [expiry])).first?["status"] as? String == "expired")
            #expect(try jsonArray(try LedgerProcess.run(at + ["9999-06-15T12:34:56.788Z"])).isEmpty)
        }
    }

    @Test func ingestRecordsMinusZeroAsAStringOrANumberAsZero() async throws {
        try await TestDatabase.with { db in
            let input = [
                Fixture.purchaseLine(["paymentSeq": "\"P-1\"", "transactionId": "\"T-1\"", "price": "\"-0\""]),
                Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "transactionId": "\"T-2\"", "price": "-0"]),
            ].joined(separator: "\n") + "\n"
            let out = try LedgerProcess.run(["ingest", "--database-url", db.conninfo], input: input)
            #expect(out.status == 0, "\(out.stdout) \(out.stderr)")
            #expect(try out.lines.map { try jsonObject($0)["status"] as? String } == ["recorded", "recorded"])
            let unconsumed = try jsonArray(try LedgerProcess.run(["unconsumed", "--user", "u1", "--json", "--database-url", db.conninfo]))
            #expect(unconsumed.map { $0["price"] as? String } == ["0", "0"])
        }
    }
}

/// The JSON array a query printed (its exit status checked).
func jsonArray(_ out: LedgerProcess.Output) throws -> [[String: Any]] {
    #expect(out.status == 0, "\(out.stderr)")
    return try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
}
