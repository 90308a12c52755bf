import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// The server logged in as the roles `ledger migrate` creates for operators, not as the owner.
    @Suite("ledger serve: least privilege")
    struct LeastPrivilegeServerTests {
        @Test func aLoginInLedgerWriterAndLedgerReaderServesEveryRoute() async throws {
            try await ServerHarness.with(loginIn: ["ledger_writer", "ledger_reader"]) { server in
                let writer = try server.key(.writer)
                #expect(try await server.send("GET", "/readyz").status == 200)
                let purchase = try await server.send("POST", "/v1/purchases", key: writer, body: Fixture.purchaseLine(["type": nil]))
                #expect(purchase.status == 200 && purchase.json["status"] as? String == "recorded")
                let unconsumed = try await server.send("GET", "/v1/users/u1/unconsumed", key: writer)
                #expect(unconsumed.array.map { $0["paymentSeq"] as? String } == ["P-1"])
                let consume = try await server.send("POST", "/v1/consumes", key: writer,
                                                    body: #"{"userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1"}"#)
                #expect(consume.json["status"] as? String == "consumed")
                #expect(try await server.send("GET", "/v1/users/u1/subscriptions", key: writer).status == 200)
                let revenue = try await server.send("GET", "/v1/analytics/revenue?from=2026-01-01&to=2026-01-02", key: writer)
                #expect(revenue.status == 200 && revenue.array.count == 1)
                let batch = try await server.send("POST", "/v1/batch", key: writer,
                                                  body: Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "transactionId": "\"T-2\""]))
                #expect(batch.text.contains(#""status":"recorded""#))
            }
        }

        @Test func aLoginInLedgerReaderOnlyAnswersQueriesAndWritesNothing() async throws {
            try await ServerHarness.with(loginIn: ["ledger_reader"]) { server in
                let writer = try server.key(.writer)
                #expect(try await server.send("GET", "/readyz").status == 200)
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: writer).status == 200)
                let before = try server.snapshot()
                let refused = try await server.send("POST", "/v1/purchases", key: writer, body: Fixture.purchaseLine(["type": nil]))
                #expect(refused.status == 500 && refused.code == "INTERNAL" && refused.message.contains("42501"))
                #expect(try server.snapshot() == before)
            }
        }
    }
}
