import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Google Play real-time developer notifications through the ledger (docs/contract.md §5.3).
@Suite("Google Play notifications")
struct GoogleNotificationTests {
    static let stores = StoreConfiguration(googlePackageNames: ["com.example.game"])

    /// A Pub/Sub push body as Google posts it, as an ingest line (`type` added, `payment` attached).
    static func push(_ id: String, at: String, _ body: String, package: String = "com.example.game", payment: String? = nil) -> String {
        let notification = #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(AppleMint.ms(at))",\#(body)}"#
        let data = Data(notification.utf8).base64EncodedString()
        let attached = payment.map { ",\"payment\":\($0)" } ?? ""
        return #"{"type":"googleNotification","message":{"data":"\#(data)","messageId":"\#(id)","publishTime":"2026-01-01T00:00:00Z"},"subscription":"projects/p/subscriptions/play"\#(attached)}"#
    }

    static func subscription(_ type: Int, token: String = "gtok-1") -> String {
        #""subscriptionNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"\#(token)","subscriptionId":"vip_month"}"#
    }

    static let purchase = #"{"type":"purchase","userId":"ug","storeCode":"GG","productId":"vip_month","productType":"AUTO_RENEWABLE","price":"4.99","currency":"USD","paymentSeq":"G-1","purchaseToken":"gtok-1","transactionId":"GPA.1-0","purchaseTime":"2026-03-01T00:00:00Z","expiryTime":"2026-04-01T00:00:00Z"}"#
    static let renewal = #"{"userId":"ug","productId":"vip_month","productType":"AUTO_RENEWABLE","price":"4.99","currency":"USD","transactionId":"GPA.1-1","originalTransactionId":"GPA.1-0","purchaseTime":"2026-04-01T00:00:00Z","expiryTime":"2026-05-01T00:00:00Z"}"#

    func status(_ c: Connection, at: String) throws -> Subscription? {
        try Subscription.fetchAll(c, userId: "ug", at: Fixture.time(at), includeExpired: true).first
    }

    @Test func aSubscriptionsNotificationsChangeItsLineage() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let out = try c.ingest([
                    Self.purchase,
                    Self.push("m-1", at: "2026-04-01T00:00:00Z", Self.subscription(2), payment: Self.renewal),
                    Self.push("m-1", at: "2026-04-01T00:00:00Z", Self.subscription(2), payment: Self.renewal),
                    Self.push("m-2", at: "2026-04-01T00:00:00Z", Self.subscription(4)),   // no payment attached
                    Self.push("m-3", at: "2026-04-10T00:00:00Z", Self.subscription(3)),   // CANCELED
                    Self.push("m-4", at: "2026-04-20T00:00:00Z", Self.subscription(7)),   // RESTARTED
                    Self.push("m-5", at: "2026-05-01T00:00:00Z", Self.subscription(6)),   // IN_GRACE_PERIOD
                    Self.push("m-6", at: "2026-05-08T00:00:00Z", Self.subscription(5)),   // ON_HOLD
                    Self.push("m-7", at: "2026-05-20T00:00:00Z", Self.subscription(10)),  // PAUSED
                    Self.push("m-8", at: "2026-05-25T00:00:00Z", Self.subscription(13)),  // EXPIRED
                    Self.push("m-9", at: "2026-03-01T00:00:00Z", #""testNotification":{"version":"1.0"}"#),
                ], stores: Self.stores)
                #expect(out.map(\.status) == [.recorded, .recorded, .duplicate, .ignored, .recorded, .recorded, .recorded,
                                              .recorded, .recorded, .recorded, .ignored])
                #expect(out[1].paymentSeq == "GPA.1-1" && out[3].notificationId == "m-2")
                // The attached payment's event is built by ledger.payment_event from the payment
                // as the decoder read it (kept in the notification's event), unchanged.
                #expect(try c.count("""
                    SELECT count(*) FROM ledger.events p, ledger.events n
                     WHERE p.type = 'RenewalRecorded' AND n.type = 'NotificationReceived' AND p.data = n.data->'payment'
                    """) == 1)
                #expect(try status(c, at: "2026-04-15T00:00:00Z")?.autoRenewing == false)
                #expect(try status(c, at: "2026-04-25T00:00:00Z")?.autoRenewing == true)
                let grace = try #require(try status(c, at: "2026-05-03T00:00:00Z"))
                #expect(grace.status == .inGracePeriod && grace.entitled && grace.gracePeriodExpiryTime == nil)
                #expect(try status(c, at: "2026-05-10T00:00:00Z")?.status == .onHold)
                #expect(try status(c, at: "2026-05-21T00:00:00Z")?.status == .paused)
                #expect(try status(c, at: "2026-05-26T00:00:00Z")?.status == .expired)
                // The token is kept only as its digest.
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE data::text LIKE '%gtok-1%'") == 0)
            }
        }
    }

    @Test func revokedAndVoidedRefundTheirPayment() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let out = try c.ingest([
                    Self.purchase,
                    Self.push("m-1", at: "2026-03-10T00:00:00Z", Self.subscription(12)),  // REVOKED
                    Fixture.purchaseLine(["paymentSeq": "\"G-2\"", "storeCode": "\"GG\"", "userId": "\"ug\"",
                                          "transactionId": "\"GPA.2\"", "purchaseToken": "\"gtok-2\""]),
                    Self.push("m-2", at: "2026-03-11T00:00:00Z",
                              #""voidedPurchaseNotification":{"purchaseToken":"gtok-2","orderId":"GPA.2","productType":2,"refundType":1}"#),
                ], stores: Self.stores)
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded, .recorded], "\(out)")
                #expect(try status(c, at: "2026-03-15T00:00:00Z")?.status == .revoked)
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE refunded_at IS NOT NULL") == 2)
                #expect(try UnconsumedPayment.fetchAll(c, userId: "ug").isEmpty)
            }
        }
    }

    /// The lineage's renewal `GPA.1-1`, bought with a token of its own.
    static let renewalWithOwnToken = #"{"type":"renewal","userId":"ug","storeCode":"GG","productId":"vip_month","productType":"AUTO_RENEWABLE","price":"4.99","currency":"USD","paymentSeq":"G-2","purchaseToken":"gtok-b","transactionId":"GPA.1-1","originalTransactionId":"GPA.1-0","purchaseTime":"2026-04-01T00:00:00Z","expiryTime":"2026-05-01T00:00:00Z"}"#

    /// §5.3: a voided purchase refunds the payment (GG, orderId). An order not recorded yet
    /// parks the notification, even when another payment holds its token, and the order's
    /// payment is refunded when it arrives; no other payment is.
    @Test func aVoidedPurchaseOfAnUnrecordedOrderWaitsForThatOrder() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let voided = #""voidedPurchaseNotification":{"purchaseToken":"gtok-1","orderId":"GPA.1-1","productType":1,"refundType":1}"#
                let out = try c.ingest([
                    Self.purchase,
                    Self.push("m-1", at: "2026-04-05T00:00:00Z", voided),
                    Self.renewalWithOwnToken.replacingOccurrences(of: "gtok-b", with: "gtok-1"),
                ], stores: Self.stores)
                #expect(out.map(\.status) == [.recorded, .parked, .recorded], "\(out)")
                #expect(try c.query("SELECT payment_seq FROM ledger.payments WHERE refunded_at IS NOT NULL ORDER BY 1")
                        .map { try $0.decode("payment_seq", as: String.self) } == ["G-2"])
                #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
            }
        }
    }

    /// §5.3: REVOKED refunds the latest payment of the lineage whose payment holds the token,
    /// whichever token that latest payment holds.
    @Test func revokedRefundsTheLineagesLatestPayment() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let out = try c.ingest([
                    Self.purchase,
                    Self.renewalWithOwnToken,
                    Self.push("m-1", at: "2026-04-10T00:00:00Z", Self.subscription(12)),  // REVOKED, the first token
                ], stores: Self.stores)
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded], "\(out)")
                #expect(try c.query("SELECT payment_seq FROM ledger.payments WHERE refunded_at IS NOT NULL ORDER BY 1")
                        .map { try $0.decode("payment_seq", as: String.self) } == ["G-2"])
                #expect(try status(c, at: "2026-04-15T00:00:00Z")?.status == .revoked)
            }
        }
    }

    @Test func aNotificationAboutAnUnknownTokenIsParkedUntilItsPurchase() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let out = try c.ingest([
                    Self.push("m-1", at: "2026-03-10T00:00:00Z", Self.subscription(3)),
                    Self.push("m-2", at: "2026-03-11T00:00:00Z",
                              #""voidedPurchaseNotification":{"purchaseToken":"gtok-9","orderId":"GPA.9","productType":2,"refundType":1}"#),
                    Self.purchase,
                ], stores: Self.stores)
                #expect(out.map(\.status) == [.parked, .parked, .recorded])
                #expect(try status(c, at: "2026-03-15T00:00:00Z")?.autoRenewing == false)
                #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 1)
            }
        }
    }

    @Test func refusalsWriteNothing() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.ingest([Self.purchase], stores: Self.stores)
                let before = try LedgerSnapshot(c)
                let out = try c.ingest([
                    Self.push("m-1", at: "2026-03-10T00:00:00Z", Self.subscription(3), package: "com.other.app"),
                    #"{"type":"googleNotification","message":{"data":"%%%","messageId":"m-2"}}"#,
                    #"{"type":"googleNotification","message":{"data":"bm90IGpzb24=","messageId":"m-3"}}"#,
                    Self.push("m-4", at: "2026-04-01T00:00:00Z", Self.subscription(2),
                              payment: #"{"userId":"ug","productId":"vip_month","productType":"AUTO_RENEWABLE","price":"4.99","currency":"USD","transactionId":"GPA.1-1","originalTransactionId":"GPA.1-0","purchaseTime":"2026-04-01T00:00:00Z","expiryTime":"2026-05-01T00:00:00Z","purchaseToken":"another"}"#),
                ], stores: Self.stores)
                #expect(out.map { $0.error?.code } == [.appMismatch, .invalidInput, .invalidInput, .invalidInput])
                #expect(out[0].error?.message.contains("packageName") == true)
                #expect(out[3].error?.message.contains("payment.purchaseToken") == true)
                #expect(try LedgerSnapshot(c) == before)
                // Without configuration, every Google notification is refused.
                #expect(try c.ingest([Self.push("m-5", at: "2026-03-10T00:00:00Z", Self.subscription(3))]).first?.error?.code == .appMismatch)
            }
        }
    }
    /// A store's own body is taken as the store sends it: `receiveStoreNotification` refuses a
    /// `payment` attached to a push (only a writer's ingest line may attach one, §5.3), naming
    /// the field, and writes nothing; the same line through `ingest` still records it.
    @Test func aPaymentAttachedToAStoresOwnBodyIsRefused() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in _ = try c.ingest([Self.purchase], stores: Self.stores) }
            let line = Self.push("m-p", at: "2026-04-01T00:00:00Z", Self.subscription(2), payment: Self.renewal)
            let body = Array(line.replacing(#""type":"googleNotification","#, with: "").utf8)
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2, stores: Self.stores)
            let before = try db.withConnection { try LedgerSnapshot($0) }
            let outcome = try await ledger.receiveStoreNotification(body)
            await ledger.close()
            #expect(outcome.status == .rejected && outcome.error?.code == .invalidInput)
            #expect(outcome.error?.message.hasPrefix("payment:") == true, "\(outcome)")
            #expect(try db.withConnection { try LedgerSnapshot($0) } == before)
            try db.withConnection { c throws in
                #expect(try c.ingest([line], stores: Self.stores).map(\.status) == [.recorded])
            }
        }
    }

    /// Pub/Sub delivers at least once, and retries while a delivery is still in flight: 64
    /// concurrent deliveries of one message record it once; 16 messages with ids of their own
    /// that carry one renewal record its payment once.
    @Test func sixtyFourConcurrentDeliveriesOfOneMessageRecordItOnce() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in _ = try c.ingest([Self.purchase], stores: Self.stores) }
            // The body exactly as Google posts it: no `type`, nothing attached.
            let line = Self.push("m-c", at: "2026-03-10T00:00:00Z", Self.subscription(3))
            let body = Array(line.replacing(#""type":"googleNotification","#, with: "").utf8)
            let renewals = try (0..<16).map { n in
                try LedgerCommand(line: Array(Self.push("m-r\(n)", at: "2026-04-01T00:00:00Z", Self.subscription(2),
                                                        payment: Self.renewal).utf8), stores: Self.stores)
            }
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 16, stores: Self.stores)
            let cancels = try await withThrowingTaskGroup(of: CommandOutcome.self) { group in
                for _ in 0..<64 { group.addTask { try await ledger.receiveStoreNotification(body) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let renewed = try await withThrowingTaskGroup(of: CommandOutcome.self) { group in
                for command in renewals { group.addTask { try await ledger.execute(command) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            await ledger.close()
            #expect(cancels.filter { $0.status == .recorded }.count == 1, "\(cancels.map(\.status))")
            #expect(cancels.filter { $0.status == .duplicate }.count == 63)
            #expect(cancels.allSatisfy { $0.notificationId == "m-c" })
            #expect(!renewed.contains { $0.status == .rejected }, "\(renewed)")
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'NotificationReceived' AND data->>'notificationId' = 'm-c'") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.auto_renew_changes") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE transaction_id = 'GPA.1-1'") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type IN ('PurchaseRecorded', 'RenewalRecorded')") == 2)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }
}
