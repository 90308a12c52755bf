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

        @Test func aGooglePurchaseTokenIsAskedInThePOSTBodyAndNamesTheLatestPaymentOfItsLineage() async throws {
            try await ServerHarness.with { server in
                let subscription = [
                    ("P-3", "GPA.5", "2026-02-01T00:00:00Z"), ("P-4", "GPA.5..0", "2026-03-01T00:00:00Z"),
                ].map { seq, transaction, time in
                    Fixture.purchaseLine(["type": seq == "P-3" ? "\"purchase\"" : "\"renewal\"", "paymentSeq": "\"\(seq)\"",
                                          "userId": "\"u3\"", "storeCode": "\"GG\"", "productId": "\"vip_month\"",
                                          "productType": "\"AUTO_RENEWABLE\"", "transactionId": "\"\(transaction)\"",
                                          "originalTransactionId": "\"GPA.5\"", "purchaseToken": "\"sub-tok\"",
                                          "purchaseTime": "\"\(time)\"", "expiryTime": "\"2026-04-01T00:00:00Z\""])
                }
                let outcomes = try server.database.withConnection { try $0.ingest(Self.lines + subscription) }
                try #require(outcomes.map(\.status.rawValue) == ["recorded", "recorded", "consumed", "recorded", "recorded", "recorded"])
                let reader = try server.key(.reader)
                let byOrder = try await server.send("GET", "/v1/lookup?orderId=GPA.3301-7", key: reader)
                let byToken = try await server.send("POST", "/v1/lookup", key: reader, body: #"{"purchaseToken":"tok-2"}"#)
                #expect(byToken.status == 200 && byToken.text == byOrder.text)
                #expect(try await server.send("POST", "/v1/lookup", key: reader,
                                              body: #"{"storeCode":"GG","purchaseToken":"tok-2"}"#).text == byOrder.text)
                // A subscription's renewals share its token: the latest payment answers.
                let renewal = try await server.send("POST", "/v1/lookup", key: reader, body: #"{"purchaseToken":"sub-tok"}"#)
                #expect(renewal.json["paymentSeq"] as? String == "P-4" && renewal.json["userId"] as? String == "u3")
                // The body takes the query's keys too.
                #expect(try await server.send("POST", "/v1/lookup", key: reader, body: #"{"orderId":"GPA.3301-7"}"#).text == byOrder.text)

                let unknown = try await server.send("POST", "/v1/lookup", key: reader, body: #"{"purchaseToken":"tok-9"}"#)
                #expect(unknown.status == 404 && unknown.message == "no payment with the given purchase token on store GG")
                // Never in a URL; never for App Store payments (tok-1 is one), found by transaction id.
                let inURL = try await server.send("GET", "/v1/lookup?purchaseToken=tok-2", key: reader)
                #expect(inURL.status == 400 && inURL.message.hasPrefix("purchaseToken:") && !inURL.text.contains("tok-2"))
                let apple = try await server.send("POST", "/v1/lookup", key: reader, body: #"{"storeCode":"AS","purchaseToken":"tok-1"}"#)
                #expect(apple.status == 400 && apple.message.hasPrefix("storeCode:") && !apple.text.contains("tok-1"))
                for (body, field) in [(#"{"purchaseToken":"tok-2","orderId":"GPA.3301-7"}"#, "purchaseToken"),
                                      (#"{"purchaseToken":7}"#, "purchaseToken"), (#"{"token":"tok-2"}"#, "token"),
                                      (#"{"purchaseToken":""}"#, "purchaseToken"), ("[]", "")] {
                    let reply = try await server.send("POST", "/v1/lookup", key: reader, body: body)
                    #expect(reply.status == 400 && reply.code == "INVALID_INPUT" && reply.message.hasPrefix(field), "\(body): \(reply.text)")
                    #expect(!reply.text.contains("tok-2"))
                }
                let noKey = try await server.send("POST", "/v1/lookup", body: #"{"purchaseToken":"tok-2"}"#)
                #expect(noKey.status == 401)
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
