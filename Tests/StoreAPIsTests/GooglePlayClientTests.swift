import LedgerTestSupport
import Foundation
import Logging
import StoreAPIs
import Testing

/// The Play Developer API client over loopback HTTP against `fake-store-api`.
@Suite struct GooglePlayClientTests {
    static let package = FakeStoreAPI.packageName

    /// A subscription as Google answers one: two line items, one priced, one without a price.
    static var subscription: [String: Any] { [
        "kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "US",
        "startTime": "2026-02-01T00:00:00Z", "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE",
        "latestOrderId": "GPA.1234-5678-9012-34567..3",
        "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING",
        "testPurchase": [String: Any](),
        "externalAccountIdentifiers": ["obfuscatedExternalAccountId": "acct-7"],
        "lineItems": [
            ["productId": "vip_month", "expiryTime": "2026-04-01T00:00:00.250Z",
             "latestSuccessfulOrderId": "GPA.1234-5678-9012-34567..3",
             "autoRenewingPlan": ["autoRenewEnabled": true,
                                  "recurringPrice": ["currencyCode": "EUR", "units": "4", "nanos": 990000000]],
             "offerDetails": ["basePlanId": "monthly"]],
            ["productId": "vip_addon", "expiryTime": "2026-04-01T02:00:00+02:00",
             "autoRenewingPlan": ["autoRenewEnabled": false]],
        ],
    ] }

    static func state(_ google: [String: Any] = [:], faults: [[String: Any]] = []) -> [String: Any] {
        var g: [String: Any] = ["packageName": package, "subscriptionsV2": ["gtok-1": subscription]]
        g.merge(google) { _, new in new }
        return ["google": g, "faults": faults]
    }

    @Test func oneTokenIsSharedByConcurrentCalls() async throws {
        try await withFake(Self.state()) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1") }
                }
                try await group.waitForAll()
            }
            let calls = try fake.calls()
            #expect(calls.filter(\.isToken).count == 1)
            #expect(calls.filter(\.isToken).allSatisfy { $0.auth == "ok" && $0.status == 200 })
            let gets = calls.filter { $0.api == "google" }
            #expect(gets.count == 8)
            #expect(gets.allSatisfy { $0.auth == "ok" && $0.status == 200 })
        }
    }

    @Test func aShortLivedTokenIsRefreshedOnceNotPerCall() async throws {
        // 61 s of life and the default 60 s margin: the token is stale one second after it came.
        try await withFake(Self.state(["accessTokenLifetime": 61])) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            try await Task.sleep(for: .milliseconds(1500))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<5 {
                    group.addTask { _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1") }
                }
                try await group.waitForAll()
            }
            let calls = try fake.calls()
            #expect(calls.filter(\.isToken).count == 2)
            #expect(calls.filter { $0.api == "google" }.count == 6)
        }
    }

    @Test func aTokenIsReusedUntilItsMarginWithAnInjectedClock() async throws {
        let clock = TestClock()
        try await withFake(Self.state()) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http,
                                          refreshMargin: 60, now: { clock.now })
            _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            clock.advance(3599 - 61)
            _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            #expect(try fake.calls().filter(\.isToken).count == 1)
            clock.advance(2)
            _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            #expect(try fake.calls().filter(\.isToken).count == 2)
        }
    }

    @Test func a401GetsANewTokenOnceAndTheCallIsTriedAgain() async throws {
        let fault: [String: Any] = ["method": "GET", "pathRegex": "subscriptionsv2/tokens/gtok-1$", "responses": [["status": 401]]]
        try await withFake(Self.state(faults: [fault])) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            let purchase = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            #expect(purchase.lineItems.count == 2)
            let calls = try fake.calls()
            #expect(calls.filter(\.isToken).count == 2)
            #expect(calls.filter { $0.api == "google" }.map(\.status) == [401, 200])
        }
    }

    @Test func a401AfterANewTokenFailsForGood() async throws {
        let fault: [String: Any] = ["method": "GET", "pathRegex": "subscriptionsv2/", "responses": [["status": 401], ["status": 401]]]
        try await withFake(Self.state(faults: [fault])) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            let error = try await #require(throws: StoreAPIError.self) {
                _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            }
            #expect(error.status == 401)
            #expect(!error.isRetryable)
            #expect(error.route == "subscriptionsv2.get")
            #expect(try fake.calls().filter(\.isToken).count == 2)
        }
    }

    @Test func subscriptionFieldsAreMappedExactly() async throws {
        var plain = Self.subscription
        plain["testPurchase"] = nil
        plain["externalAccountIdentifiers"] = nil
        plain["acknowledgementState"] = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
        try await withFake(Self.state(["subscriptionsV2": ["gtok-1": Self.subscription, "gtok-2": plain]])) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            let purchase = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            #expect(purchase.subscriptionState == "SUBSCRIPTION_STATE_ACTIVE")
            #expect(purchase.latestOrderId == "GPA.1234-5678-9012-34567..3")
            #expect(purchase.isAcknowledgementPending)
            #expect(purchase.isTestPurchase)
            #expect(purchase.obfuscatedExternalAccountId == "acct-7")
            #expect(purchase.startTime == StoreTimestamp.date("2026-02-01T00:00:00Z"))
            let vip = try #require(purchase.lineItem(productId: "vip_month"))
            #expect(vip.latestSuccessfulOrderId == "GPA.1234-5678-9012-34567..3")
            #expect(vip.expiryTime == Date(timeIntervalSince1970: 1_775_001_600.25))
            #expect(vip.autoRenewingPlan?.autoRenewEnabled == true)
            #expect(vip.autoRenewingPlan?.recurringPrice == GoogleMoney(currencyCode: "EUR", units: "4", nanos: 990_000_000))
            #expect(vip.autoRenewingPlan?.recurringPrice?.decimal == "4.99")
            let addon = try #require(purchase.lineItem(productId: "vip_addon"))
            #expect(addon.expiryTime == Date(timeIntervalSince1970: 1_775_001_600))
            #expect(addon.autoRenewingPlan?.recurringPrice == nil)
            #expect(addon.latestSuccessfulOrderId == nil)

            let other = try await client.subscriptionV2(packageName: Self.package, token: "gtok-2")
            #expect(!other.isTestPurchase)
            #expect(!other.isAcknowledgementPending)
            #expect(other.obfuscatedExternalAccountId == nil)
        }
    }

    @Test func productFieldsAreMapped() async throws {
        let product: [String: Any] = [
            "kind": "androidpublisher#productPurchaseV2", "orderId": "GPA.2222-3333-4444-55555",
            "purchaseStateContext": ["purchaseState": "PURCHASED"],
            "purchaseCompletionTime": "2026-02-05T00:00:00.5Z",
            "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING",
            "testPurchaseContext": ["fopType": "TEST"], "obfuscatedExternalAccountId": "acct-9",
            "productLineItem": [["productId": "gem_100", "productOfferDetails": ["quantity": 1]]],
        ]
        try await withFake(Self.state(["productsV2": ["ptok-1": product]])) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            let purchase = try await client.productV2(packageName: Self.package, token: "ptok-1")
            #expect(purchase.orderId == "GPA.2222-3333-4444-55555")
            #expect(purchase.purchaseCompletionTime == Date(timeIntervalSince1970: 1_770_249_600.5))
            #expect(purchase.isAcknowledgementPending)
            #expect(purchase.isTestPurchase)
            #expect(purchase.obfuscatedExternalAccountId == "acct-9")
            #expect(purchase.purchaseState == "PURCHASED")
            #expect(purchase.productIds == ["gem_100"])
            let calls = try fake.calls().filter { $0.api == "google" }
            #expect(calls.map(\.path) == ["/androidpublisher/v3/applications/\(Self.package)/purchases/productsv2/tokens/ptok-1"])
        }
    }

    @Test func acknowledgementsPostToTheDocumentedPaths() async throws {
        let product: [String: Any] = [
            "orderId": "GPA.2222-3333-4444-55555", "purchaseStateContext": ["purchaseState": "PURCHASED"],
            "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING", "productLineItem": [["productId": "gem_100"]],
        ]
        try await withFake(Self.state(["productsV2": ["ptok-1": product]])) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            try await client.acknowledgeSubscription(packageName: Self.package, subscriptionId: "vip_month", token: "gtok-1")
            try await client.acknowledgeProduct(packageName: Self.package, productId: "gem_100", token: "ptok-1")
            #expect(try await !client.subscriptionV2(packageName: Self.package, token: "gtok-1").isAcknowledgementPending)
            #expect(try await !client.productV2(packageName: Self.package, token: "ptok-1").isAcknowledgementPending)
            let posts = try fake.calls().filter { $0.api == "google" && $0.method == "POST" }
            let base = "/androidpublisher/v3/applications/\(Self.package)/purchases/"
            #expect(posts.map(\.path) == [base + "subscriptions/vip_month/tokens/gtok-1:acknowledge",
                                          base + "products/gem_100/tokens/ptok-1:acknowledge"])
            #expect(posts.map(\.status) == [204, 204])
            let notes = posts.map { $0.object["note"] as? [String: Any] ?? [:] }
            #expect(notes[0]["subscriptionIdMatches"] as? Bool == true)
            #expect(notes.allSatisfy { $0["repeat"] == nil })
        }
    }

    @Test func voidedPurchasesAreReadOverEveryPage() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let voided: [[String: Any]] = (0..<5).map { index in
            var entry: [String: Any] = [
                "kind": "androidpublisher#voidedPurchase", "purchaseToken": "vtok-\(index)", "orderId": "GPA.0000-\(index)",
                "purchaseTimeMillis": String(now - 86_400_000), "voidedTimeMillis": String(now - 3_600_000 + Int64(index)),
                "voidedSource": 0, "voidedReason": index,
            ]
            if index == 0 { entry["purchaseToken"] = "gtok-1" }  // a subscription's: listed only with type=1
            return entry
        }
        try await withFake(Self.state(["voidedPurchases": voided, "voidedPageSize": 2])) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            let start = Date(timeIntervalSince1970: Double(now) / 1000 - 86_400), end = Date()
            let all = try await client.allVoidedPurchases(packageName: Self.package, startTime: start, endTime: end)
            #expect(all.map(\.purchaseToken) == ["gtok-1", "vtok-1", "vtok-2", "vtok-3", "vtok-4"])
            #expect(all[2].orderId == "GPA.0000-2")
            #expect(all[2].purchaseTimeMillis == now - 86_400_000)
            #expect(all[2].voidedTimeMillis == now - 3_600_000 + 2)
            #expect(all[2].voidedSource == 0 && all[2].voidedReason == 2 && all[2].voidedQuantity == nil)
            let lists = try fake.calls().filter { $0.api == "google" }
            #expect(lists.count == 3)
            #expect(lists.allSatisfy { $0.query["type"] as? String == "1" && $0.status == 200 })
            #expect(lists[0].query["token"] == nil && lists[1].query["token"] != nil && lists[2].query["token"] != nil)
        }
    }

    @Test func partialRefundsAreListedOnlyWhenAskedFor() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let voided: [[String: Any]] = [
            ["purchaseToken": "vtok-1", "orderId": "GPA.1", "purchaseTimeMillis": String(now - 7_200_000),
             "voidedTimeMillis": String(now - 3_600_000), "voidedSource": 1, "voidedReason": 0],
            ["purchaseToken": "vtok-2", "orderId": "GPA.2", "purchaseTimeMillis": String(now - 7_200_000),
             "voidedTimeMillis": String(now - 3_600_000), "voidedSource": 2, "voidedReason": 7, "voidedQuantity": 2],
        ]
        try await withFake(Self.state(["voidedPurchases": voided])) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            let start = Date().addingTimeInterval(-86_400)
            let whole = try await client.allVoidedPurchases(packageName: Self.package, startTime: start, endTime: Date())
            #expect(whole.map(\.orderId) == ["GPA.1"])
            let all = try await client.allVoidedPurchases(packageName: Self.package, startTime: start, endTime: Date(),
                                                          includeQuantityBasedPartialRefund: true)
            #expect(all.map(\.orderId) == ["GPA.1", "GPA.2"])
            #expect(all[1].voidedQuantity == 2 && all[1].voidedReason == 7 && all[1].voidedSource == 2)
        }
    }

    @Test func transientFaultsAreRetryableWithRetryAfter() async throws {
        let faults: [[String: Any]] = [["method": "GET", "pathRegex": "subscriptionsv2/tokens/gtok-1$", "responses": [
            ["status": 503], ["status": 429, "headers": ["Retry-After": "7"]], ["close": true], ["status": 500],
        ]]]
        try await withFake(Self.state(faults: faults)) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            func failure() async throws -> StoreAPIError {
                try await #require(throws: StoreAPIError.self) {
                    _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
                }
            }
            let unavailable = try await failure()
            #expect(unavailable.status == 503 && unavailable.isRetryable && unavailable.storeCode == "backendError")
            #expect(unavailable.retryAfter == nil)
            let limited = try await failure()
            #expect(limited.status == 429 && limited.isRetryable && limited.retryAfter == 7)
            #expect(limited.storeCode == "rateLimitExceeded")
            let dropped = try await failure()
            #expect(dropped.kind == .connection && dropped.isRetryable)
            let internalError = try await failure()
            #expect(internalError.status == 500 && internalError.isRetryable)
            // The faults are used up: the store answers again.
            #expect(try await client.subscriptionV2(packageName: Self.package, token: "gtok-1").lineItems.count == 2)
        }
    }

    @Test func aDelayBeyondTheTimeoutIsARetryableTimeout() async throws {
        let faults: [[String: Any]] = [["method": "GET", "pathRegex": "subscriptionsv2/", "responses": [["delaySeconds": 10]]]]
        try await withFake(Self.state(faults: faults), configuration: .init(requestTimeout: .seconds(1))) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            // The token first (the fault is on subscriptionsv2 only), so that only the slow call is timed.
            _ = try? await client.productV2(packageName: Self.package, token: "unknown")
            let started = ContinuousClock.now
            let error = try await #require(throws: StoreAPIError.self) {
                _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            }
            #expect(error.kind == .timeout && error.isRetryable)
            // Well before the store's answer (10 s), with room for a loaded machine.
            #expect(ContinuousClock.now - started < .seconds(8))
        }
    }

    @Test func clientErrorsFailForGoodWithTheStoresCode() async throws {
        let pending: [String: Any] = ["orderId": "GPA.9", "purchaseStateContext": ["purchaseState": "PENDING"],
                                      "productLineItem": [["productId": "gem_100"]]]
        let faults: [[String: Any]] = [["method": "GET", "pathRegex": "productsv2/tokens/forbidden$", "responses": [["status": 403]]]]
        try await withFake(Self.state(["productsV2": ["ptok-pending": pending]], faults: faults)) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            let secret = "secret-purchase-token-2f9c41"
            let missing = try await #require(throws: StoreAPIError.self) {
                _ = try await client.subscriptionV2(packageName: Self.package, token: secret)
            }
            #expect(missing.status == 404 && !missing.isRetryable && missing.storeCode == "purchaseTokenNotFound")
            #expect(missing.store == .googlePlay && missing.route == "subscriptionsv2.get")
            let invalid = try await #require(throws: StoreAPIError.self) {
                try await client.acknowledgeProduct(packageName: Self.package, productId: "gem_100", token: "ptok-pending")
            }
            #expect(invalid.status == 400 && !invalid.isRetryable && invalid.storeCode == "invalidPurchaseState")
            #expect(invalid.route == "products.acknowledge")
            let forbidden = try await #require(throws: StoreAPIError.self) {
                _ = try await client.productV2(packageName: Self.package, token: "forbidden")
            }
            #expect(forbidden.status == 403 && !forbidden.isRetryable && forbidden.storeCode == "forbidden")
            let unknownApp = try await #require(throws: StoreAPIError.self) {
                _ = try await client.productV2(packageName: "com.example.other", token: secret)
            }
            #expect(unknownApp.status == 404 && unknownApp.storeCode == "applicationNotFound")
            for error in [missing, invalid, forbidden, unknownApp] {
                let text = "\(error)" + String(reflecting: error)
                #expect(!text.contains(secret) && !text.contains("ptok-pending") && !text.contains("forbidden/"))
                #expect(!text.contains("ya29") && !text.contains("Bearer") && !text.contains("eyJ"))
            }
        }
    }

    @Test func aTokenEndpointRefusalIsTheOAuthStoresError() async throws {
        let faults: [[String: Any]] = [["method": "POST", "pathRegex": "^/token$", "responses": [["status": 503], ["status": 400]]]]
        try await withFake(Self.state(faults: faults)) { fake, http in
            let client = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            let down = try await #require(throws: StoreAPIError.self) {
                _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            }
            #expect(down.store == .googleOAuth && down.route == "oauth2.token" && down.isRetryable)
            #expect(down.storeCode == "temporarily_unavailable")
            let refused = try await #require(throws: StoreAPIError.self) {
                _ = try await client.subscriptionV2(packageName: Self.package, token: "gtok-1")
            }
            #expect(refused.status == 400 && !refused.isRetryable && refused.storeCode == "invalid_request")
            #expect(try await client.subscriptionV2(packageName: Self.package, token: "gtok-1").lineItems.count == 2)
        }
    }
}

/// What the clients log: route templates and statuses, never a token, JWT, path or key.
@Suite struct StoreLogTests {
    @Test func logsHoldNoSecret() async throws {
        let lines = RecordingLogHandler.Lines()
        let logger = Logger(label: "StoreAPIsTests") { _ in RecordingLogHandler(lines: lines) }
        let secret = "secret-purchase-token-8d1e0b"
        var state = GooglePlayClientTests.state(
            ["subscriptionsV2": [secret: GooglePlayClientTests.subscription]],
            faults: [["method": "GET", "pathRegex": "subscriptionsv2/", "responses": [["status": 401]]],
                     ["method": "PUT", "pathRegex": "consumption/", "responses": [["status": 401]]]])
        state["apple"] = AppStoreServerClientTests.state()["apple"]
        try await withFake(state, logger: logger) { fake, http in
            let google = GooglePlayClient(account: try fake.serviceAccount(), baseURL: fake.baseURL, http: http)
            _ = try await google.subscriptionV2(packageName: GooglePlayClientTests.package, token: secret)
            _ = try? await google.productV2(packageName: GooglePlayClientTests.package, token: secret)
            let apple = try AppStoreServerClientTests.client(fake, http)
            try await apple.sendConsumptionInformation(
                transactionId: AppStoreServerClientTests.consumable,
                body: ConsumptionRequest(deliveryStatus: .delivered, sampleContentProvided: false), environment: .production)
            let account = try String(contentsOfFile: fake.serviceAccountFile, encoding: .utf8)
            let pemLine = try #require(account.split(separator: "\\n").dropFirst().first)
            let text = lines.all.joined(separator: "\n")
            #expect(text.contains("route=subscriptionsv2.get") && text.contains("status=401") && text.contains("route=consumption.send"))
            #expect(text.contains("route=oauth2.token"))
            for forbidden in [secret, "ya29", "eyJ", "Bearer", String(pemLine), "/androidpublisher/", "/inApps/"] {
                #expect(!text.contains(forbidden), "the logs hold \(forbidden.prefix(12))…")
            }
        }
    }
}

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let state = Mutex(Date())
    var now: Date { state.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { state.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

import Synchronization
