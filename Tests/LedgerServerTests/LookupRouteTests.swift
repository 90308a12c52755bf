import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `GET /v1/lookup`: one payment by its name, its store transaction or its Google order id,
    /// with its owner and what became of it.
    @Suite("ledger serve: payment lookup")
    struct LookupRouteTests {
        static let lines = [
            Fixture.purchaseLine(["paymentSeq": "\"P-1\""]),
            Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "userId": "\"u2\"", "storeCode": "\"GG\"", "transactionId": "\"GPA.3301-7\"",
                                  "purchaseToken": "\"tok-2\"", "price": "\"4.50\""]),
            #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1","time":"2026-01-03T00:00:00Z"}"#,
            #"{"type":"refund","paymentSeq":"P-2","time":"2026-01-04T00:00:00Z","reason":"chargeback"}"#,
        ]

        @Test func aPaymentIsFoundByItsNameItsTransactionOrItsOrderIdWithItsOwnerAndState() async throws {
            try await ServerHarness.with { server in
                let outcomes = try server.database.withConnection { try $0.ingest(Self.lines) }
                try #require(outcomes.map(\.status.rawValue) == ["recorded", "recorded", "consumed", "recorded"])
                let reader = try server.key(.reader)
                let byName = try await server.send("GET", "/v1/lookup?paymentSeq=P-1", key: reader)
                #expect(byName.status == 200)
                #expect(byName.json["userId"] as? String == "u1" && byName.json["transactionId"] as? String == "T-1")
                #expect(byName.json["consumedAt"] as? String == "2026-01-03T00:00:00.000Z")
                #expect(byName.json["refundedAt"] is NSNull && byName.json["source"] as? String == "sdk")
                #expect(byName.json["purchaseToken"] == nil && byName.json["purchaseTokenSha256"] == nil)
                let byTransaction = try await server.send("GET", "/v1/lookup?storeCode=AS&transactionId=T-1", key: reader)
                #expect(byTransaction.text == byName.text)

                let byOrder = try await server.send("GET", "/v1/lookup?orderId=GPA.3301-7", key: reader)
                #expect(byOrder.json["paymentSeq"] as? String == "P-2" && byOrder.json["userId"] as? String == "u2")
                #expect(byOrder.json["price"] as? String == "4.50" && byOrder.json["storeCode"] as? String == "GG")
                #expect(byOrder.json["refundedAt"] as? String == "2026-01-04T00:00:00.000Z")
                #expect(byOrder.json["refundReason"] as? String == "chargeback")
                #expect(try await server.send("GET", "/v1/lookup?storeCode=GG&orderId=GPA.3301-7", key: reader).text == byOrder.text)

                // The same transaction id on the other store is another payment: none here.
                let other = try await server.send("GET", "/v1/lookup?storeCode=GG&transactionId=T-1", key: reader)
                #expect(other.status == 404 && other.code == "NOT_FOUND")
                #expect(other.message == "no payment with transactionId T-1 on store GG")
                let unknown = try await server.send("GET", "/v1/lookup?paymentSeq=P-9", key: reader)
                #expect(unknown.status == 404 && unknown.message == "no payment P-9")
            }
        }

        @Test(arguments: [
            ("", "paymentSeq"), ("transactionId=T-1", "storeCode"), ("paymentSeq=P-1&orderId=GPA.1", "paymentSeq"),
            ("transactionId=T-1&orderId=GPA.1&storeCode=GG", "transactionId"), ("orderId=GPA.1&storeCode=AS", "storeCode"),
            ("paymentSeq=P-1&storeCode=AS", "storeCode"), ("paymentSeq=", "paymentSeq"),
        ])
        func anAmbiguousOrIncompleteKeyIs400NamingTheParameter(query: String, parameter: String) async throws {
            try await ServerHarness.with { server in
                let reply = try await server.send("GET", "/v1/lookup?\(query)", key: try server.key(.reader))
                #expect(reply.status == 400 && reply.code == "INVALID_INPUT")
                #expect(reply.message.hasPrefix(parameter + ":"), "\(reply.message)")
            }
        }

        @Test func anUnknownStoreIs400UnknownStore() async throws {
            try await ServerHarness.with { server in
                let reply = try await server.send("GET", "/v1/lookup?storeCode=XX&transactionId=T-1", key: try server.key(.reader))
                #expect(reply.status == 400 && reply.code == "UNKNOWN_STORE" && reply.message.hasPrefix("storeCode:"))
            }
        }
    }
}
