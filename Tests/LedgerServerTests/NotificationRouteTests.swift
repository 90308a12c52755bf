import Foundation
import LedgerServer
import LedgerTestSupport
import PurchaseLedger
import Testing

extension LedgerServerTests {
    /// The stores' webhooks: Apple's signed bodies, Google's Pub/Sub pushes behind OIDC or a secret.
    @Suite("ledger serve: store webhooks")
    struct NotificationRouteTests {
        static let issuer = TestOIDCIssuer()

        static func configure(_ configuration: inout ServerConfiguration) {
            configuration.googlePush = GooglePushAuthentication(oidc: issuer.verifier, sharedSecret: "s3cret-push")
        }

        @Test func anAppleNotificationIsAcceptedOnlyAfterItsCommit() async throws {
            try await ServerHarness.with(stores: StoreMint.stores) { server in
                let link = try await server.send("POST", "/v1/account-links", key: try server.key(.writer),
                                                 body: #"{"userId":"u1","storeCode":"AS","appAccountToken":"acct-1"}"#)
                #expect(link.status == 200)
                let body = StoreMint.appleSubscribed(uuid: "n-1", transaction: "AT-1")
                let reply = try await server.send("POST", "/notifications/apple", body: body)
                #expect(reply.status == 200)
                #expect(reply.json["status"] as? String == "recorded" && reply.json["paymentSeq"] as? String == "AT-1")
                #expect(reply.json["notificationId"] as? String == "n-1")
                // Committed before the answer: another connection sees the subscription.
                let subs = try server.database.withConnection {
                    try Subscription.fetchAll($0, userId: "u1", at: Fixture.time("2026-03-15T00:00:00Z"))
                }
                #expect(subs.map(\.originalTransactionId) == ["AT-1"])
                let again = try await server.send("POST", "/notifications/apple", body: body)
                #expect(again.status == 200 && again.json["status"] as? String == "duplicate")
            }
        }

        @Test func anAppleNotificationWithoutAKnownOwnerIsParkedWith202() async throws {
            try await ServerHarness.with(stores: StoreMint.stores) { server in
                let reply = try await server.send("POST", "/notifications/apple",
                                                  body: StoreMint.appleSubscribed(uuid: "n-2", transaction: "AT-2", account: "acct-unknown"))
                #expect(reply.status == 202 && reply.json["status"] as? String == "parked")
            }
        }

        @Test func aBadAppleSignatureIs400AndWritesNothing() async throws {
            try await ServerHarness.with(stores: StoreMint.stores) { server in
                let before = try server.snapshot()
                var body = StoreMint.appleSubscribed(uuid: "n-3", transaction: "AT-3")
                let end = body.index(body.endIndex, offsetBy: -6)
                body.replaceSubrange(end...end, with: body[end] == "A" ? "B" : "A")
                let reply = try await server.send("POST", "/notifications/apple", body: body)
                #expect(reply.status == 400 && reply.code == "SIGNATURE_INVALID")
                #expect(try server.snapshot() == before)
            }
        }

        @Test func anAppNotAcceptedIs403AppMismatchAndWritesNothing() async throws {
            try await ServerHarness.with(stores: .none) { server in
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/notifications/google?token=s3cret-push",
                                                  body: StoreMint.googlePush(messageId: "m-0"))
                #expect(reply.status == 401)  // no push authentication configured at all
                #expect(try server.snapshot() == before)
            }
            try await ServerHarness.with(stores: .none, Self.configure) { server in
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/notifications/google?token=s3cret-push",
                                                  body: StoreMint.googlePush(messageId: "m-0"))
                #expect(reply.status == 403 && reply.code == "APP_MISMATCH")
                #expect(try server.snapshot() == before)
            }
        }

        @Test func aGoogleBodyPostedToTheAppleRouteIsRefusedAndWritesNothing() async throws {
            try await ServerHarness.with(stores: StoreMint.stores) { server in
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/notifications/apple", body: StoreMint.googlePush(messageId: "m-1"))
                #expect(reply.status == 400 && reply.code == "INVALID_INPUT")
                #expect(reply.message.contains("signedPayload"))
                #expect(try server.snapshot() == before)
            }
        }

        @Test func aGooglePushWithAValidOIDCTokenIsAccepted() async throws {
            try await ServerHarness.with(stores: StoreMint.stores, Self.configure) { server in
                let reply = try await server.send("POST", "/notifications/google", key: Self.issuer.token(),
                                                  body: StoreMint.googlePush(messageId: "m-2"))
                #expect(reply.status == 200 && reply.json["status"] as? String == "ignored")
                #expect(reply.json["notificationId"] as? String == "m-2")
                #expect(try server.database.withConnection { try $0.count("SELECT count(*) FROM ledger.events") } == 1)
            }
        }

        @Test(arguments: [
            ("aud", issuer.token(audience: "https://elsewhere.example.com")),
            ("iss", issuer.token(issuer: "https://evil.example.com")),
            ("exp", issuer.token(expiresIn: -3600)),
            ("email", issuer.token(email: "someone@example.com")),
            ("alg", issuer.token(alg: "HS256")),
            ("kid", issuer.token(kid: "other-key")),
            ("signature", TestOIDCIssuer().token()),
            ("JWT", "a.b"),
        ])
        func aGooglePushWithABadTokenIs401AndWritesNothing(check: String, token: String) async throws {
            try await ServerHarness.with(stores: StoreMint.stores, Self.configure) { server in
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/notifications/google", key: token,
                                                  body: StoreMint.googlePush(messageId: "m-3"))
                #expect(reply.status == 401 && reply.code == "UNAUTHORIZED")
                #expect(reply.message.contains(check))
                #expect(try server.snapshot() == before)
                #expect(!server.log.all.joined().contains(token))
            }
        }

        @Test func aGooglePushWithTheSharedSecretIsAcceptedAndAWrongOneIsNot() async throws {
            try await ServerHarness.with(stores: StoreMint.stores, Self.configure) { server in
                let before = try server.snapshot()
                let wrong = try await server.send("POST", "/notifications/google?token=guess", body: StoreMint.googlePush(messageId: "m-4"))
                #expect(wrong.status == 401)
                let none = try await server.send("POST", "/notifications/google", body: StoreMint.googlePush(messageId: "m-4"))
                #expect(none.status == 401)
                #expect(try server.snapshot() == before)
                let right = try await server.send("POST", "/notifications/google?token=s3cret-push", body: StoreMint.googlePush(messageId: "m-4"))
                #expect(right.status == 200 && right.json["status"] as? String == "ignored")
                #expect(!server.log.all.joined().contains("s3cret-push"))
            }
        }

        @Test func aNotificationsKeyMayRelayGooglePushesAndOtherKeysMayNot() async throws {
            try await ServerHarness.with(stores: StoreMint.stores) { server in
                let writer = try await server.send("POST", "/notifications/google", key: try server.key(.writer),
                                                   body: StoreMint.googlePush(messageId: "m-5"))
                #expect(writer.status == 403)
                let relay = try await server.send("POST", "/notifications/google", key: try server.key(.notifications),
                                                  body: StoreMint.googlePush(messageId: "m-5"))
                #expect(relay.status == 200 && relay.json["status"] as? String == "ignored")
            }
        }

        @Test func aNotificationWhileTheDatabaseIsUnreachableIs503() async throws {
            try await ServerHarness.with(stores: StoreMint.stores,
                                         databaseURL: "host=127.0.0.1 port=1 user=nobody connect_timeout=2") { server in
                let reply = try await server.send("POST", "/notifications/apple", body: StoreMint.appleSubscribed(uuid: "n-9", transaction: "AT-9"))
                #expect(reply.status == 503 && reply.code == "UNAVAILABLE")
            }
        }
    }
}
