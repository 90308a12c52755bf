import Foundation
import LedgerServer
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `POST /v1/<command>`: the contract's commands over HTTP, with its statuses and codes.
    @Suite("ledger serve: commands")
    struct CommandRouteTests {
        static let purchase = Fixture.purchaseLine(["type": nil])
        static let consume = #"{"userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1","time":"2026-01-01T00:05:00Z"}"#

        @Test func aPurchaseIsRecordedOnceAndItsReplayIsADuplicate() async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                let first = try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase)
                #expect(first.status == 200)
                #expect(first.json["status"] as? String == "recorded" && first.json["paymentSeq"] as? String == "P-1")
                let again = try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase)
                #expect(again.status == 200 && again.json["status"] as? String == "duplicate")
                #expect(try server.database.withConnection { try $0.count("SELECT count(*) FROM ledger.payments") } == 1)
            }
        }

        @Test func aConsumeReplayAnswersAlreadyConsumedWithTheFirstTime() async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                _ = try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase)
                let first = try await server.send("POST", "/v1/consumes", key: key, body: Self.consume)
                #expect(first.status == 200 && first.json["status"] as? String == "consumed")
                #expect(first.json["consumedAt"] as? String == "2026-01-01T00:05:00.000Z")
                let replay = try await server.send("POST", "/v1/consumes", key: key,
                                                   body: Self.consume.replacingOccurrences(of: "00:05:00", with: "00:09:00"))
                #expect(replay.status == 200 && replay.json["status"] as? String == "alreadyConsumed")
                #expect(replay.json["consumedAt"] as? String == "2026-01-01T00:05:00.000Z")
            }
        }

        @Test(arguments: [
            (#"{"userId":"u1","paymentSeq":"P-1","purchaseToken":"wrong"}"#, 403, "TOKEN_INVALID"),
            (#"{"userId":"u2","paymentSeq":"P-1","purchaseToken":"tok-1"}"#, 403, "USER_INVALID"),
            (#"{"userId":"u1","paymentSeq":"P-9","purchaseToken":"tok-1"}"#, 404, "NOT_FOUND"),
        ])
        func aRefusedConsumeAnswersTheContractCodeAndWritesNothing(body: String, status: Int, code: String) async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                _ = try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase)
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/v1/consumes", key: key, body: body)
                #expect(reply.status == status && reply.code == code)
                #expect(Set(reply.json.keys) == ["code", "message"])
                #expect(try server.snapshot() == before)
            }
        }

        @Test(arguments: [
            (Fixture.purchaseLine(["type": nil, "currency": nil]), "currency"),
            (Fixture.purchaseLine(["type": nil, "price": "\"-1\""]), "price"),
            (Fixture.purchaseLine(["type": nil, "purchaseTime": "\"yesterday\""]), "purchaseTime"),
            (Fixture.purchaseLine(["type": "\"refund\""]), "type"),
            ("{\"userId\":", "malformed JSON"),
            ("[1,2]", "expected a JSON object"),
        ])
        func badInputIs400NamingTheFieldAndWritesNothing(body: String, field: String) async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/v1/purchases", key: key, body: body)
                #expect(reply.status == 400 && reply.code == "INVALID_INPUT")
                #expect(reply.message.contains(field))
                #expect(try server.snapshot() == before)
            }
        }

        @Test func anUnknownStoreAndAConflictingPaymentAnswerTheirCodes() async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                _ = try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase)
                let before = try server.snapshot()
                let store = try await server.send("POST", "/v1/purchases", key: key,
                                                  body: Fixture.purchaseLine(["type": nil, "storeCode": "\"XX\"", "paymentSeq": "\"P-2\""]))
                #expect(store.status == 400 && store.code == "UNKNOWN_STORE")
                let conflict = try await server.send("POST", "/v1/purchases", key: key,
                                                     body: Fixture.purchaseLine(["type": nil, "price": "\"1.99\""]))
                #expect(conflict.status == 409 && conflict.code == "PAYMENT_CONFLICT")
                #expect(try server.snapshot() == before)
            }
        }

        @Test func refundCancelRestoreProductAndAccountLinkRoutesRunTheirCommands() async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                let sub = Fixture.purchaseLine(["type": nil, "paymentSeq": "\"S-1\"", "transactionId": "\"ST-1\"",
                                                "productId": "\"vip\"", "productType": "\"AUTO_RENEWABLE\"",
                                                "purchaseToken": "\"stok\"", "expiryTime": "\"2026-02-01T00:00:00Z\""])
                #expect(try await server.send("POST", "/v1/purchases", key: key, body: sub).json["status"] as? String == "recorded")
                let renewal = Fixture.purchaseLine(["type": nil, "paymentSeq": "\"S-2\"", "transactionId": "\"ST-2\"",
                                                    "originalTransactionId": "\"ST-1\"", "productId": "\"vip\"",
                                                    "productType": "\"AUTO_RENEWABLE\"", "purchaseToken": "\"stok2\"",
                                                    "purchaseTime": "\"2026-02-01T00:00:00Z\"", "expiryTime": "\"2026-03-01T00:00:00Z\""])
                #expect(try await server.send("POST", "/v1/renewals", key: key, body: renewal).json["status"] as? String == "recorded")
                let cancel = try await server.send("POST", "/v1/cancels", key: key,
                                                   body: #"{"storeCode":"AS","originalTransactionId":"ST-1","time":"2026-02-10T00:00:00Z"}"#)
                #expect(cancel.status == 200 && cancel.json["status"] as? String == "recorded")
                #expect(cancel.json["originalTransactionId"] as? String == "ST-1")
                let refund = try await server.send("POST", "/v1/refunds", key: key, body: #"{"paymentSeq":"S-2","time":"2026-02-11T00:00:00Z"}"#)
                #expect(refund.json["status"] as? String == "recorded")
                let again = try await server.send("POST", "/v1/refunds", key: key, body: #"{"paymentSeq":"S-2"}"#)
                #expect(again.json["status"] as? String == "duplicate")
                let missing = try await server.send("POST", "/v1/refunds", key: key, body: #"{"paymentSeq":"S-9"}"#)
                #expect(missing.status == 404 && missing.code == "NOT_FOUND")
                let restore = try await server.send("POST", "/v1/restores", key: key, body: """
                    {"userId":"u1","storeCode":"AS","time":"2026-02-12T00:00:00Z","purchases":[\(sub)]}
                    """)
                #expect(restore.status == 200 && restore.json["status"] as? String == "restored")
                #expect(restore.json["recorded"] as? [String] == [] && restore.json["payments"] as? [String] == ["S-1", "S-2"])
                let product = try await server.send("POST", "/v1/products", key: key,
                                                    body: #"{"storeCode":"AS","productId":"coins_monthly","productType":"CONSUMABLE_AUTO_RENEWABLE"}"#)
                #expect(product.json["status"] as? String == "recorded")
                let link = try await server.send("POST", "/v1/account-links", key: key,
                                                 body: #"{"userId":"u1","storeCode":"AS","appAccountToken":"acct-9"}"#)
                #expect(link.json["status"] as? String == "recorded")
                let stolen = try await server.send("POST", "/v1/account-links", key: key,
                                                   body: #"{"userId":"u2","storeCode":"AS","appAccountToken":"acct-9"}"#)
                #expect(stolen.status == 403 && stolen.code == "USER_INVALID")
            }
        }

        @Test func aBodyOverTheLimitIs413AndWritesNothing() async throws {
            try await ServerHarness.with({ $0.maxBodyBytes = 2048 }) { server in
                let key = try server.key(.writer)
                let before = try server.snapshot()
                let big = Fixture.purchaseLine(["type": nil, "payload": "\"" + String(repeating: "x", count: 4000) + "\""])
                let reply = try await server.send("POST", "/v1/purchases", key: key, body: big)
                #expect(reply.status == 413 && reply.code == "PAYLOAD_TOO_LARGE")
                #expect(try server.snapshot() == before)
            }
        }

        @Test func anUnreachableDatabaseIs503() async throws {
            try await ServerHarness.with(databaseURL: "host=127.0.0.1 port=1 user=nobody password=hunter2 connect_timeout=2") { server in
                // Keys cannot be read either: the answer is 503, so the caller retries.
                let reply = try await server.send("POST", "/v1/purchases", key: "lk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", body: Self.purchase)
                #expect(reply.status == 503 && reply.code == "UNAVAILABLE")
                #expect(reply.header("Retry-After") != nil)
                #expect(!reply.text.contains("hunter2"))
                #expect(!server.log.all.joined().contains("hunter2"))
            }
        }
    }
}
