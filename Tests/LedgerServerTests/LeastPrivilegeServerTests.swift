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

        /// Store notifications need `ledger_store`: a server whose login is only a writer refuses
        /// them (a 5xx, so the store delivers again once the operator grants the role) and
        /// writes nothing; with `ledger_store` the same notification is recorded.
        @Test(arguments: [["ledger_writer", "ledger_reader"], ["ledger_store", "ledger_reader"]])
        func storeNotificationsNeedTheStoreRole(roles: [String]) async throws {
            try await ServerHarness.with(stores: StoreMint.stores, loginIn: roles) { server in
                let writer = try server.key(.writer)
                #expect(try await server.ledger.mayTakeStoreNotifications() == roles.contains("ledger_store"))
                let link = try await server.send("POST", "/v1/account-links", key: writer,
                                                 body: #"{"userId":"u1","storeCode":"AS","appAccountToken":"acct-1"}"#)
                #expect(link.status == 200)
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/notifications/apple", body: StoreMint.appleSubscribed(uuid: "n-1", transaction: "AT-1"))
                if roles.contains("ledger_store") {
                    #expect(reply.status == 200 && reply.json["status"] as? String == "recorded", "\(reply.text)")
                } else {
                    #expect(reply.status >= 500 && reply.message.contains("42501"), "\(reply.status) \(reply.text)")
                    #expect(try server.snapshot() == before)
                }
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
