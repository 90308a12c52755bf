import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import StoreAPIs
import Testing

/// docs/contract.md §6.3 over loopback HTTP against the store fake and a real database: Google's
/// notifications recorded with a job, the job's answer recorded as a payment through the same
/// rules as every other, its faults retried, its refusals kept, and acknowledgement once.
@Suite("Google Play: notifications asked of the Play Developer API, on durable jobs")
struct GoogleJobTests {
    static let sdkPurchase = Harness.googlePurchase(seq: "P-G1", token: "gtok-1", order: "GPA.1234-5678-9012-34567",
                                                    at: "2026-02-01T00:00:00Z", expiry: "2026-03-01T00:00:00Z")
    static let renewed = Harness.googleSubscriptionPush(type: 2, token: "gtok-1", messageId: "m-1",
                                                        eventTime: "2026-03-01T00:00:05Z")

    @Test func aRenewalLearnedFromSubscriptionsV2ExtendsTheSubscription() async throws {
        let state = Harness.googleState(subscriptions: ["gtok-1": Harness.subscriptionV2(order: "GPA.1234-5678-9012-34567..0",
                                                                                        expiry: "2026-04-01T00:00:00Z")])
        try await Harness.with(state) { h in
            #expect(try h.seed([Self.sdkPurchase]).map(\.status) == [.recorded])
            #expect(try h.ingest([Self.renewed]).map(\.status) == [.recorded])
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE state = 'pending' AND kind = 'google.subscription'") == 1)
            // The token is in the job only: never in the log.
            #expect(try h.count("SELECT count(*) FROM ledger.events WHERE data::text LIKE '%gtok-1%'") == 0)

            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.result) == [.done], "\(runs)")
            #expect(runs.first?.outcome == "recorded")
            #expect(runs.first?.paymentSeq == "GPA.1234-5678-9012-34567..0")

            let at = Fixture.time("2026-03-15T00:00:00Z")
            let subscriptions = try await h.ledger.subscriptions(userId: "u1", at: at)
            #expect(subscriptions.count == 1)
            let subscription = try #require(subscriptions.first)
            #expect(subscription.originalTransactionId == "GPA.1234-5678-9012-34567")
            #expect(subscription.latestPaymentSeq == "GPA.1234-5678-9012-34567..0")
            #expect(subscription.expiryTime == Fixture.time("2026-04-01T00:00:00Z"))
            // The payment as §6.3 maps it: price from units and nanos, bought at the notification's time.
            let found = try h.database.withConnection { try $0.query("""
                SELECT price::text AS price, currency, kind, purchase_time, sandbox_payment, lineage_id, product_type
                  FROM ledger.payments WHERE payment_seq = 'GPA.1234-5678-9012-34567..0'
                """).first }
            let row = try #require(found)
            #expect(try row.decode("price", as: String.self) == "4.99")
            #expect(try row.decode("currency", as: String.self) == "USD")
            #expect(try row.decode("kind", as: String.self) == "renewal")
            #expect(try row.decode("purchase_time", as: Date.self) == Fixture.time("2026-03-01T00:00:05Z"))
            #expect(try row.decode("sandbox_payment", as: Bool.self) == false)
            #expect(try row.decode("lineage_id", as: String.self) == "GPA.1234-5678-9012-34567")
            #expect(try row.decode("product_type", as: String.self) == "AUTO_RENEWABLE")
            // Done, and its token gone.
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE state = 'done' AND secret IS NULL") == 1)
            #expect(try h.calls("POST", ":acknowledge").isEmpty)
        }
    }

    @Test func theUsersHistoryShowsTheNotificationWithTheJobItCausedAndItsOutcome() async throws {
        let state = Harness.googleState(subscriptions: ["gtok-1": Harness.subscriptionV2(order: "GPA.1234-5678-9012-34567..0",
                                                                                        expiry: "2026-04-01T00:00:00Z")])
        try await Harness.with(state) { h in
            _ = try h.seed([Self.sdkPurchase])
            _ = try h.ingest([Self.renewed])
            let jobId = try h.count("SELECT id FROM ledger.jobs WHERE kind = 'google.subscription'")
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            try #require(runs.map(\.result) == [.done], "\(runs)")

            let history = try await h.ledger.history(userId: "u1")
            // The SDK's purchase; the push, which asked; the answer's payment and its own notification.
            #expect(history.entries.map(\.change) == ["recorded", "notification:asked", "renewed", "notification:applied"])
            #expect(history.entries.map { $0.notificationId ?? "-" } == ["-", "m-1", "-", "m-1/subscriptionsv2"])
            let notification = try #require(history.entries.first { $0.type.rawValue == "NotificationReceived" })
            #expect(notification.notificationId == "m-1")
            #expect(notification.jobs.map { "\($0.id) \($0.kind) \($0.state) \($0.outcome ?? "-")" }
                    == ["\(jobId) google.subscription done recorded"])
            // The payment the job learned, after the notification that asked for it; it caused no job.
            let renewal = history.entries[2]
            #expect(renewal.paymentSeq == "GPA.1234-5678-9012-34567..0")
            #expect(history.entries.filter { $0.type.rawValue != "NotificationReceived" || $0.notificationId != "m-1" }
                        .allSatisfy { $0.jobs.isEmpty })
        }
    }

    @Test(arguments: [("5", 0, "5"), ("0", 990_000_000, "0.99"), ("12", 500_000_000, "12.5"), ("1", 1, "1.000000001")])
    func recurringPricesAreUnitsPlusNanosExactly(units: String, nanos: Int, price: String) async throws {
        let state = Harness.googleState(subscriptions: ["gtok-1": Harness.subscriptionV2(
            order: "GPA.1234-5678-9012-34567..1", expiry: "2026-04-01T00:00:00Z", units: units, nanos: nanos, currency: "EUR", test: true)])
        try await Harness.with(state) { h in
            _ = try h.seed([Self.sdkPurchase])
            _ = try h.ingest([Self.renewed])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            let found = try h.database.withConnection { try $0.query(
                "SELECT price::text AS price, currency, sandbox_payment FROM ledger.payments WHERE payment_seq = 'GPA.1234-5678-9012-34567..1'").first }
            let row = try #require(found, "\(runs)")
            #expect(try row.decode("price", as: String.self) == price)
            #expect(try row.decode("currency", as: String.self) == "EUR")
            #expect(try row.decode("sandbox_payment", as: Bool.self) == true)
        }
    }

    @Test func withoutARecurringPriceTheLineagesLatestPriceStands() async throws {
        let state = Harness.googleState(subscriptions: ["gtok-1": Harness.subscriptionV2(
            order: "GPA.1234-5678-9012-34567..0", expiry: "2026-04-01T00:00:00Z", units: nil)])
        try await Harness.with(state) { h in
            _ = try h.seed([Self.sdkPurchase])
            _ = try h.ingest([Self.renewed])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE payment_seq = 'GPA.1234-5678-9012-34567..0' AND price = 4.99 AND currency = 'USD'") == 1, "\(runs)")
        }
    }

    @Test func aServerErrorIsRetriedAndTheEffectAppliedOnce() async throws {
        let state = Harness.googleState(
            subscriptions: ["gtok-1": Harness.subscriptionV2(order: "GPA.1234-5678-9012-34567..0", expiry: "2026-04-01T00:00:00Z")],
            faults: [["method": "GET", "pathRegex": "subscriptionsv2/tokens/gtok-1$",
                      "responses": [["status": 503], ["status": 429, "headers": ["Retry-After": "1"]], ["close": true]]]])
        try await Harness.with(state) { h in
            _ = try h.seed([Self.sdkPurchase])
            _ = try h.ingest([Self.renewed])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(60))
            #expect(runs.map(\.result) == [.retrying, .retrying, .retrying, .done], "\(runs)")
            #expect(runs.map(\.attempt) == [1, 2, 3, 4])
            #expect(try h.calls("GET", "subscriptionsv2/tokens/gtok-1").count == 4)
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE store_code = 'GG'") == 2)
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE state = 'done' AND attempts = 4 AND failing_since IS NOT NULL") == 1)
        }
    }

    @Test(arguments: [404, 400, 403])
    func aRefusalFailsTheJobForGoodWithTheStoresAnswerAndARetryRunsItAgain(status: Int) async throws {
        let state = Harness.googleState(
            subscriptions: ["gtok-1": Harness.subscriptionV2(order: "GPA.1234-5678-9012-34567..0", expiry: "2026-04-01T00:00:00Z")],
            faults: [["method": "GET", "pathRegex": "subscriptionsv2/tokens/gtok-1$", "responses": [["status": status]]]])
        try await Harness.with(state) { h in
            _ = try h.seed([Self.sdkPurchase])
            _ = try h.ingest([Self.renewed])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.result) == [.failed], "\(runs)")
            let failed = try await h.ledger.jobs(state: .failed)
            #expect(failed.count == 1)
            #expect(failed.first?.lastStatus == status)
            #expect(failed.first?.lastError?.contains("HTTP \(status)") == true)
            #expect(failed.first?.lastError?.contains("gtok-1") == false)
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE store_code = 'GG'") == 1)

            #expect(try await h.ledger.retryJob(id: try #require(failed.first?.id)) == .pending)
            let again = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(again.map(\.result) == [.done], "\(again)")
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE store_code = 'GG'") == 2)
        }
    }

    @Test func aReplayedNotificationAddsNoJobAndAPaymentAlreadyHeldIsADuplicate() async throws {
        let state = Harness.googleState(subscriptions: ["gtok-1": Harness.subscriptionV2(
            order: "GPA.1234-5678-9012-34567..0", expiry: "2026-04-01T00:00:00Z", acknowledged: false)])
        try await Harness.with(state) { h in
            #expect(try h.seed([Self.sdkPurchase]).map(\.status) == [.recorded])
            #expect(try h.ingest([Self.renewed, Self.renewed]).map(\.status) == [.recorded, .duplicate])
            _ = try await h.runner().runUntilIdle(timeout: .seconds(30))
            // Another notification about the same order (RECOVERED after RENEWED): a duplicate payment.
            _ = try h.ingest([Harness.googleSubscriptionPush(type: 1, token: "gtok-1", messageId: "m-2", eventTime: "2026-03-01T00:01:00Z")])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.outcome) == ["duplicate"], "\(runs)")
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE store_code = 'GG'") == 2)
            // Acknowledged once, whatever the replays.
            let acks = try h.calls("POST", "purchases/subscriptions/vip_month/tokens/gtok-1:acknowledge")
            #expect(acks.count == 1)
            #expect(acks.first?.status == 200 || acks.first?.status == 204)
        }
    }

    @Test func aNotificationAboutAnUnknownTokenIsParkedUntilAnAccountLinkNamesItsOwner() async throws {
        let state = Harness.googleState(subscriptions: ["gtok-9": Harness.subscriptionV2(
            order: "GPA.9999-0000-1111-22222", expiry: "2026-04-01T00:00:00Z", account: "acct-7")])
        try await Harness.with(state) { h in
            let push = Harness.googleSubscriptionPush(type: 4, token: "gtok-9", messageId: "m-9", eventTime: "2026-03-01T00:00:00Z")
            #expect(try h.ingest([push]).map(\.status) == [.recorded])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.outcome) == ["parked"], "\(runs)")
            #expect(try h.count("SELECT count(*) FROM ledger.payments").isZero)
            let link = #"{"type":"accountLink","userId":"u7","storeCode":"GG","obfuscatedAccountId":"acct-7"}"#
            #expect(try h.ingest([link]).map(\.status) == [.recorded])
            let subscriptions = try await h.ledger.subscriptions(userId: "u7", at: Fixture.time("2026-03-15T00:00:00Z"))
            #expect(subscriptions.map(\.latestPaymentSeq) == ["GPA.9999-0000-1111-22222"])
            #expect(subscriptions.map(\.originalTransactionId) == ["GPA.9999-0000-1111-22222"])
        }
    }

    @Test func aOneTimePurchaseTakesTheDeclaredPriceAndWithoutOneFailsNamingTheProduct() async throws {
        let state = Harness.googleState(products: [
            "gtok-2": Harness.productV2(order: "GPA.2222-3333-4444-55555", acknowledged: false, account: "acct-2"),
            "gtok-3": Harness.productV2(order: "GPA.3333-3333-4444-55555", product: "gem_500", account: "acct-2"),
        ])
        try await Harness.with(state) { h in
            let lines = [
                #"{"type":"product","storeCode":"GG","productId":"gem_100","productType":"CONSUMABLE","price":"0.99","currency":"USD"}"#,
                #"{"type":"accountLink","userId":"u2","storeCode":"GG","obfuscatedAccountId":"acct-2"}"#,
                Harness.googleOneTimePush(token: "gtok-2", sku: "gem_100", messageId: "o-1", eventTime: "2026-02-05T00:00:01Z"),
                Harness.googleOneTimePush(token: "gtok-3", sku: "gem_500", messageId: "o-2", eventTime: "2026-02-05T00:00:02Z"),
            ]
            #expect(try h.ingest(lines).map(\.status) == [.recorded, .recorded, .recorded, .recorded])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.filter { $0.kind == "google.product" }.map(\.result) == [.done, .failed], "\(runs)")
            #expect(runs.first { $0.result == .failed }?.error?.contains("gem_500") == true)
            let unconsumed = try await h.ledger.unconsumed(userId: "u2")
            #expect(unconsumed.map(\.paymentSeq) == ["GPA.2222-3333-4444-55555"])
            #expect(unconsumed.first?.price == "0.99")
            #expect(unconsumed.first?.purchaseTime == Fixture.time("2026-02-05T00:00:00Z"))
            #expect(try h.calls("POST", "purchases/products/gem_100/tokens/gtok-2:acknowledge").count == 1)
            #expect(try h.calls("POST", "gtok-3:acknowledge").isEmpty)
        }
    }

    /// RESTARTED both turns auto-renew back on (§5.3) and asks subscriptionsv2 (§6.3); about an
    /// unknown token it is recorded with its job all the same, its own effect parked.
    @Test func aRestartTurnsAutoRenewBackOnAndAsksGoogle() async throws {
        let state = Harness.googleState(subscriptions: [
            "gtok-1": Harness.subscriptionV2(order: "GPA.1234-5678-9012-34567", expiry: "2026-03-01T00:00:00Z"),
            "gtok-8": Harness.subscriptionV2(order: "GPA.8888-0000-1111-22222", expiry: "2026-03-01T00:00:00Z", account: "acct-8"),
        ])
        try await Harness.with(state) { h in
            _ = try h.seed([Self.sdkPurchase])
            let at = Fixture.time("2026-02-10T00:00:00Z")
            let canceled = Harness.googleSubscriptionPush(type: 3, token: "gtok-1", messageId: "m-3", eventTime: "2026-02-05T00:00:00Z")
            #expect(try h.ingest([canceled]).map(\.status) == [.recorded])
            #expect(try await h.ledger.subscriptions(userId: "u1", at: at).map(\.autoRenewing) == [false])

            let restarted = Harness.googleSubscriptionPush(type: 7, token: "gtok-1", messageId: "m-7", eventTime: "2026-02-06T00:00:00Z")
            let unknown = Harness.googleSubscriptionPush(type: 7, token: "gtok-8", messageId: "m-8", eventTime: "2026-02-06T00:00:00Z")
            #expect(try h.ingest([restarted, unknown]).map(\.status) == [.recorded, .recorded])
            #expect(try await h.ledger.subscriptions(userId: "u1", at: at).map(\.autoRenewing) == [true])
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE kind = 'google.subscription'") == 2)
            #expect(try h.count("SELECT count(*) FROM ledger.notifications WHERE notification_id = 'm-8' AND parked") == 1)

            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            // The restart's order is the purchase the line reported: a duplicate. The unknown
            // token's answer names no owner the ledger knows: parked until a link does.
            #expect(runs.map(\.outcome).sorted { ($0 ?? "") < ($1 ?? "") } == ["duplicate", "parked"], "\(runs)")
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE store_code = 'GG'") == 1)
            let link = #"{"type":"accountLink","userId":"u8","storeCode":"GG","obfuscatedAccountId":"acct-8"}"#
            #expect(try h.ingest([link]).map(\.status) == [.recorded])
            let u8 = try await h.ledger.subscriptions(userId: "u8", at: at)
            #expect(u8.map(\.latestPaymentSeq) == ["GPA.8888-0000-1111-22222"])
            #expect(u8.map(\.autoRenewing) == [true])
            #expect(try h.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
        }
    }

    @Test func withoutGoogleConfiguredTheTableOfSection5Stands() async throws {
        try await TestDatabase.with { database in
            let stores = StoreConfiguration(googlePackageNames: [Harness.package])
            let outcomes = try database.withConnection { try $0.ingest([Self.sdkPurchase, Self.renewed], stores: stores) }
            #expect(outcomes.map(\.status) == [.recorded, .ignored])
            #expect(try database.withConnection { try $0.count("SELECT count(*) FROM ledger.jobs") } == 0)
        }
    }

    /// A runner that dies between the store's answer and its commit: its lease runs out, the
    /// next runner runs the job, and the payment is recorded once.
    @Test func aJobWhoseRunnerDiedRunsAgainAfterItsLeaseAndRecordsOnce() async throws {
        let state = Harness.googleState(subscriptions: ["gtok-1": Harness.subscriptionV2(
            order: "GPA.1234-5678-9012-34567..0", expiry: "2026-04-01T00:00:00Z")])
        try await Harness.with(state) { h in
            _ = try h.seed([Self.sdkPurchase])
            _ = try h.ingest([Self.renewed])
            // The dead runner's claim: while its lease lasts, no other runner takes the job.
            #expect(try h.count("SELECT count(*) FROM ledger.claim_jobs(10, interval '10 minutes', ARRAY['google.subscription'])") == 1)
            #expect(try await h.runner().runDue().isEmpty)
            // Ten minutes later (the clock moved by moving the lease's end).
            #expect(try h.count("WITH moved AS (UPDATE ledger.jobs SET run_after = now() - interval '1 second' RETURNING id) SELECT count(*) FROM moved") == 1)
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.result) == [.done], "\(runs)")
            #expect(runs.map(\.attempt) == [2])
            // The first claim's finish comes too late and changes nothing.
            #expect(try h.count("SELECT count(*) FROM ledger.finish_job((SELECT id FROM ledger.jobs), 1, NULL, NULL) WHERE status = 'duplicate'") == 1)
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE store_code = 'GG'") == 2)
        }
    }

    /// Two runners share 200 jobs: each job runs to its effect exactly once.
    @Test func twoRunnersShareTwoHundredJobsAndRunEachOnce() async throws {
        var subscriptions: [String: Any] = [:]
        var purchases: [String] = []
        var pushes: [String] = []
        for n in 0..<200 {
            subscriptions["tok-\(n)"] = Harness.subscriptionV2(order: "GPA.0000-0000-0000-\(10000 + n)..0", expiry: "2026-04-01T00:00:00Z")
            purchases.append(Harness.googlePurchase(seq: "P-\(n)", user: "u\(n % 7)", token: "tok-\(n)", order: "GPA.0000-0000-0000-\(10000 + n)",
                                                    at: "2026-02-01T00:00:00Z", expiry: "2026-03-01T00:00:00Z"))
            pushes.append(Harness.googleSubscriptionPush(type: 2, token: "tok-\(n)", messageId: "m-\(n)", eventTime: "2026-03-01T00:00:05Z"))
        }
        try await Harness.with(Harness.googleState(subscriptions: subscriptions)) { h in
            _ = try h.seed(purchases)
            _ = try h.ingest(pushes)
            async let first = h.runner { $0.concurrency = 4 }.runUntilIdle(timeout: .seconds(240))
            async let second = h.runner { $0.concurrency = 4 }.runUntilIdle(timeout: .seconds(240))
            let runs = try await first + second
            #expect(runs.count == 200)
            #expect(Set(runs.map(\.id)).count == 200)
            #expect(runs.allSatisfy { $0.result == .done && $0.outcome == "recorded" })
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE transaction_id LIKE '%..0'") == 200)
            #expect(try h.calls("GET", "").filter { $0.path.contains("subscriptionsv2") }.count == 200)
            // One access token per runner (each stands for a server), not one per job.
            #expect(try h.fake.calls().filter(\.isToken).count == 2)
        }
    }

    /// `ledger reconcile google`: voided purchases over several pages, in the store's order;
    /// a refund already applied is a duplicate, an unknown order is parked.
    @Test func voidedPurchasesAreReconciledPageByPage() async throws {
        func voided(_ token: String, _ order: String, at time: String) -> [String: Any] {
            ["kind": "androidpublisher#voidedPurchase", "purchaseToken": token, "orderId": order,
             "purchaseTimeMillis": "\(Harness.millis("2026-02-05T00:00:00Z"))", "voidedTimeMillis": "\(Harness.millis(time))",
             "voidedSource": 0, "voidedReason": 1]
        }
        var state = Harness.googleState(voided: [voided("gtok-2", "GPA.2222", at: "2026-02-20T00:00:00Z"),
                                                 voided("gtok-3", "GPA.3333", at: "2026-02-21T00:00:00Z"),
                                                 voided("gtok-4", "GPA.4444", at: "2026-02-22T00:00:00Z")])
        var google = state["google"] as! [String: Any]
        google["voidedPageSize"] = 2
        state["google"] = google
        try await Harness.with(state) { h in
            _ = try h.seed([Harness.googlePurchase(seq: "P-2", product: "gem_100", type: "CONSUMABLE", token: "gtok-2", order: "GPA.2222",
                                                     at: "2026-02-05T00:00:00Z", price: "0.99"),
                              Harness.googlePurchase(seq: "P-3", product: "gem_100", type: "CONSUMABLE", token: "gtok-3", order: "GPA.3333",
                                                     at: "2026-02-05T00:00:00Z", price: "0.99"),
                              #"{"type":"refund","paymentSeq":"P-3","time":"2026-02-21T00:00:00Z"}"#])
            let reconciler = Reconciler(ledger: h.ledger, stores: h.api, http: h.http)
            let outcomes = try await reconciler.google(since: Fixture.time("2026-01-01T00:00:00Z"))
            #expect(outcomes.map(\.status) == [.recorded, .duplicate, .parked])
            #expect(outcomes.map(\.paymentSeq) == ["P-2", "P-3", nil])
            #expect(try h.calls("GET", "/purchases/voidedpurchases").count == 2)
            #expect(try await h.ledger.unconsumed(userId: "u1").isEmpty)
            let again = try await reconciler.google(since: Fixture.time("2026-01-01T00:00:00Z"))
            #expect(again.map(\.status) == [.duplicate, .duplicate, .duplicate])
        }
    }
}

extension Int {
    var isZero: Bool { self == 0 }
}
