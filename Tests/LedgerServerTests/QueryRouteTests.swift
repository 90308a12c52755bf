import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `GET /v1/users/{userId}/…` and `GET /v1/analytics/…`: the CLI's JSON over HTTP.
    @Suite("ledger serve: queries and reports")
    struct QueryRouteTests {
        static let lines = [
            Fixture.purchaseLine(["paymentSeq": "\"P-1\""]),
            Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "transactionId": "\"T-2\"", "storeCode": "\"GG\"", "purchaseToken": "\"tok-2\"",
                                  "purchaseTime": "\"2026-01-02T00:00:00Z\""]),
            Fixture.purchaseLine(["paymentSeq": "\"S-1\"", "transactionId": "\"ST-1\"", "productId": "\"vip\"",
                                  "productType": "\"AUTO_RENEWABLE\"", "price": "4.99", "purchaseToken": "\"stok\"",
                                  "expiryTime": "\"2026-02-01T00:00:00Z\""]),
        ]

        @Test func unconsumedListsTheUsersPaymentsAsTheCLIPrintsThem() async throws {
            try await ServerHarness.with { server in
                try server.database.withConnection { _ = try $0.ingest(Self.lines) }
                let reader = try server.key(.reader)
                let all = try await server.send("GET", "/v1/users/u1/unconsumed", key: reader)
                #expect(all.status == 200)
                #expect(all.array.map { $0["paymentSeq"] as? String } == ["P-1", "P-2"])
                #expect(all.array.first?["price"] as? String == "0.99")
                #expect(all.array.first?["purchaseTime"] as? String == "2026-01-01T00:00:00.000Z")
                #expect(all.array.first?["purchaseToken"] == nil)
                let google = try await server.send("GET", "/v1/users/u1/unconsumed?store=GG", key: reader)
                #expect(google.array.map { $0["paymentSeq"] as? String } == ["P-2"])
                let nobody = try await server.send("GET", "/v1/users/u9/unconsumed", key: reader)
                #expect(nobody.status == 200 && nobody.text == "[]")
            }
        }

        @Test func subscriptionsAreEvaluatedAtTheInstantAsked() async throws {
            try await ServerHarness.with { server in
                try server.database.withConnection { _ = try $0.ingest(Self.lines) }
                let reader = try server.key(.reader)
                let during = try await server.send("GET", "/v1/users/u1/subscriptions?at=2026-01-15T00:00:00Z", key: reader)
                #expect(during.array.map { $0["status"] as? String } == ["active"])
                #expect(during.array.first?["entitled"] as? Bool == true)
                let after = try await server.send("GET", "/v1/users/u1/subscriptions?at=2026-03-01T00:00:00Z", key: reader)
                #expect(after.text == "[]")
                let expired = try await server.send("GET", "/v1/users/u1/subscriptions?at=2026-03-01T00:00:00Z&includeExpired=true", key: reader)
                #expect(expired.array.map { $0["status"] as? String } == ["expired"])
            }
        }

        @Test(arguments: [
            ("/v1/users/u1/subscriptions?at=tomorrow", "INVALID_INPUT", "at"),
            ("/v1/users/u1/subscriptions?includeExpired=maybe", "INVALID_INPUT", "includeExpired"),
            ("/v1/users/u1/unconsumed?store=XX", "UNKNOWN_STORE", "store"),
            ("/v1/analytics/revenue?from=2026-01-01", "INVALID_INPUT", "to"),
            ("/v1/analytics/revenue?from=2026-02-01&to=2026-01-01", "INVALID_INPUT", "to"),
            ("/v1/analytics/revenue?from=2026-01-01&to=2026-02-01&by=week", "INVALID_INPUT", "by"),
            ("/v1/analytics/revenue?from=Jan&to=2026-02-01", "INVALID_INPUT", "from"),
        ])
        func aBadParameterIs400NamingIt(uri: String, code: String, parameter: String) async throws {
            try await ServerHarness.with { server in
                let reply = try await server.send("GET", uri, key: try server.key(.reader))
                #expect(reply.status == 400 && reply.code == code)
                #expect(reply.message.hasPrefix(parameter + ":"))
            }
        }

        @Test func reportsAnswerJSONOrCSVByAccept() async throws {
            try await ServerHarness.with { server in
                try server.database.withConnection { _ = try $0.ingest(Self.lines) }
                let reader = try server.key(.reader)
                let uri = "/v1/analytics/revenue?from=2026-01-01&to=2026-02-01&by=month"
                let json = try await server.send("GET", uri, key: reader)
                #expect(json.status == 200)
                let rows = json.array.map { "\($0["storeCode"] ?? "") \($0["currency"] ?? "") \($0["payments"] ?? "") \($0["gross"] ?? "")" }
                #expect(rows == ["AS USD 2 5.98", "GG USD 1 0.99"])
                let csv = try await server.send("GET", uri, key: reader, headers: ["Accept": "text/csv"])
                #expect(csv.header("Content-Type")?.hasPrefix("text/csv") == true)
                #expect(csv.text == "period,storeCode,currency,payments,gross,refunds,net\r\n2026-01-01,AS,USD,2,5.98,0,5.98\r\n2026-01-01,GG,USD,1,0.99,0,0.99\r\n")
                for report in ["subscribers", "churn", "refunds"] {
                    #expect(try await server.send("GET", "/v1/analytics/\(report)?from=2026-01-01&to=2026-01-03", key: reader).status == 200)
                }
                let backlog = try await server.send("GET", "/v1/analytics/backlog?at=2026-01-10T00:00:00Z", key: reader)
                #expect(backlog.status == 200 && backlog.array.count == 2)
            }
        }
    }
}
