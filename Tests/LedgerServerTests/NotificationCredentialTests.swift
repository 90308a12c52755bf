import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

extension LedgerServerTests {
    /// What each credential of the notification routes can cause: only what the store sends.
    /// A push credential (Pub/Sub's secret or OIDC token, a `notifications` key) is the weakest
    /// the server has, so a `payment` attached to a push, which only a writer's line may carry, is
    /// refused there: otherwise the push secret alone would record a free consumable for another
    /// user, which the backend's consume would then answer `consumed`.
    @Suite("ledger serve: what a push credential can cause")
    struct NotificationCredentialTests {
        /// A Pub/Sub push of `SUBSCRIPTION_RENEWED` (2) with a forged `payment` attached: a
        /// consumable of price 0 for user `victim`, as the hostile run sent it.
        static func forgedPush(messageId: String) -> String {
            let notification = """
                {"version":"1.0","packageName":"\(StoreMint.bundle)","eventTimeMillis":"\(StoreMint.ms("2026-03-01T00:00:00Z"))",\
                "subscriptionNotification":{"version":"1.0","notificationType":2,"purchaseToken":"tok-forged","subscriptionId":"gem_100"}}
                """
            let data = Data(notification.utf8).base64EncodedString()
            let payment = """
                {"userId":"victim","productId":"gem_100","productType":"CONSUMABLE","price":"0","currency":"USD",\
                "paymentSeq":"FREE-1","transactionId":"GPA.0000-0000-0000-00001","purchaseTime":"2026-03-01T00:00:00Z"}
                """
            return #"{"message":{"data":"\#(data)","messageId":"\#(messageId)","publishTime":"2026-03-01T00:00:00Z"},"subscription":"projects/p/subscriptions/play","payment":\#(payment)}"#
        }

        @Test(arguments: ["secret", "notifications key"])
        func aPaymentAttachedToAPushIsRefusedNamingTheFieldAndWritesNothing(credential: String) async throws {
            try await ServerHarness.with(stores: StoreMint.stores, NotificationRouteTests.configure) { server in
                let before = try server.snapshot()
                let reply = credential == "secret"
                    ? try await server.send("POST", "/notifications/google?token=s3cret-push", body: Self.forgedPush(messageId: "f-1"))
                    : try await server.send("POST", "/notifications/google", key: try server.key(.notifications),
                                            body: Self.forgedPush(messageId: "f-1"))
                #expect(reply.status == 400 && reply.code == "INVALID_INPUT", "\(reply.status) \(reply.text)")
                #expect(reply.message.hasPrefix("payment:"), "\(reply.message)")
                #expect(try server.snapshot() == before)
                // No free goods: the backend's consume finds no such payment.
                let consume = try await server.send("POST", "/v1/consumes", key: try server.key(.writer),
                                                    body: #"{"userId":"victim","paymentSeq":"FREE-1","purchaseToken":"tok-forged"}"#)
                #expect(consume.status == 404 && consume.code == "NOT_FOUND", "\(consume.text)")
                // The same push without the payment is taken as Google sends it (ignored: the
                // ledger would have to ask Google what it describes).
                let plain = try await server.send("POST", "/notifications/google?token=s3cret-push",
                                                  body: StoreMint.googlePush(messageId: "f-2"))
                #expect(plain.status == 200 && plain.json["status"] as? String == "ignored")
            }
        }

        /// A body naming another `type` is refused too: the route says which store's
        /// notification it takes, and nothing else.
        @Test func anotherCommandTypeOnTheNotificationRoutesIsRefused() async throws {
            try await ServerHarness.with(stores: StoreMint.stores, NotificationRouteTests.configure) { server in
                let before = try server.snapshot()
                let google = try await server.send("POST", "/notifications/google?token=s3cret-push",
                                                   body: Fixture.purchaseLine(["storeCode": "\"GG\"", "message": "{}"]))
                #expect(google.status == 400 && google.code == "INVALID_INPUT" && google.message.hasPrefix("type:"), "\(google.text)")
                let apple = try await server.send("POST", "/notifications/apple",
                                                  body: Fixture.purchaseLine(["signedPayload": "\"x.y.z\""]))
                #expect(apple.status == 400 && apple.code == "INVALID_INPUT" && apple.message.hasPrefix("type:"), "\(apple.text)")
                #expect(try server.snapshot() == before)
            }
        }

        /// Where a writer's credential is checked, attaching stays possible (docs/contract.md §5.3).
        @Test func aWritersBatchLineMayStillAttachAPayment() async throws {
            try await ServerHarness.with(stores: StoreMint.stores, NotificationRouteTests.configure) { server in
                let line = Self.forgedPush(messageId: "w-1").replacingOccurrences(of: "{\"message\"", with: "{\"type\":\"googleNotification\",\"message\"")
                let reply = try await server.send("POST", "/v1/batch", key: try server.key(.writer), body: line)
                #expect(reply.status == 200 && reply.text.contains(#""status":"recorded""#), "\(reply.text)")
            }
        }
    }
}
