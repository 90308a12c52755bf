import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import StoreAPIs

/// A migrated database, the store fake with `state`, and a ledger that accepts
/// `com.example.game` on both stores and asks both: what every test here starts from.
struct Harness {
    let database: TestDatabase
    let fake: FakeStoreAPI
    let ledger: Ledger
    let api: StoreAPIConfiguration
    let http: StoreHTTPClient
    let chain: TestAppleChain
    /// The store variables this ledger was configured with (for a `ledger` process of a test).
    let environment: [String: String]

    static let package = "com.example.game"

    static func with<T>(_ state: [String: Any], consumptionAnswers: Bool = false,
                        environment extra: [String: String] = [:], chain: TestAppleChain = TestAppleChain(),
                        _ body: (Harness) async throws -> T) async throws -> T {
        try await TestDatabase.with { database in
            let fake = try await FakeStoreAPI(state: state)
            defer { fake.stop() }
            var environment = [
                "LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE": fake.serviceAccountFile, "LEDGER_GOOGLE_API_URL": fake.baseURL,
                "LEDGER_APPLE_API_KEY_FILE": fake.appleKeyFile, "LEDGER_APPLE_API_KEY_ID": fake.appleKeyId,
                "LEDGER_APPLE_API_ISSUER_ID": fake.appleIssuerId, "LEDGER_APPLE_API_URL": fake.baseURL,
                "LEDGER_APPLE_API_SANDBOX_URL": fake.baseURL,
                "LEDGER_APPLE_CONSUMPTION_ANSWERS": consumptionAnswers ? "on" : "off",
                "LEDGER_GOOGLE_PACKAGE_NAMES": package, "LEDGER_APPLE_BUNDLE_IDS": package,
            ]
            environment.merge(extra) { $1 }
            var stores = try StoreConfiguration.fromEnvironment(environment)
            stores.appleRoots = chain.roots
            let api = try StoreAPIConfiguration.fromEnvironment(environment)
            let ledger = Ledger(databaseURL: database.conninfo, poolSize: 4, stores: stores)
            let http = StoreHTTPClient()
            let harness = Harness(database: database, fake: fake, ledger: ledger, api: api, http: http, chain: chain,
                                  environment: environment)
            do {
                let value = try await body(harness)
                await ledger.close()
                try await http.shutdown()
                return value
            } catch {
                await ledger.close()
                try? await http.shutdown()
                throw error
            }
        }
    }

    func runner(_ configure: (inout JobRunner.Options) -> Void = { _ in }) -> JobRunner {
        var options = JobRunner.Options()
        configure(&options)
        return JobRunner(ledger: ledger, stores: api, http: http, options: options)
    }

    /// Ingests contract lines as `ledger ingest` does, with this ledger's store configuration.
    func ingest(_ lines: [String]) throws -> [CommandOutcome] {
        try database.withConnection { try $0.ingest(lines, stores: ledger.stores) }
    }

    /// Lines a ledger took before Google's API was configured (notifications accepted, nothing
    /// asked): no job comes with them. The tests of a notification's job start from these, so
    /// that the only job is the one under test.
    func seed(_ lines: [String]) throws -> [CommandOutcome] {
        var stores = ledger.stores
        stores.asksGoogle = false
        return try database.withConnection { try $0.ingest(lines, stores: stores) }
    }

    func count(_ sql: String) throws -> Int {
        try database.withConnection { try $0.count(sql) }
    }

    func calls(_ method: String, _ pathSuffix: String) throws -> [FakeStoreAPI.Call] {
        try fake.calls().filter { $0.method == method && $0.path.hasSuffix(pathSuffix) }
    }

    // MARK: Lines

    /// A Google push of a `subscriptionNotification`, as Pub/Sub delivers it.
    static func googleSubscriptionPush(type: Int, token: String, product: String = "vip_month",
                                       messageId: String, eventTime: String) -> String {
        let data = #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(millis(eventTime))","subscriptionNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"\#(token)","subscriptionId":"\#(product)"}}"#
        return #"{"type":"googleNotification","message":{"data":"\#(Data(data.utf8).base64EncodedString())","messageId":"\#(messageId)","publishTime":"2026-01-01T00:00:00Z"},"subscription":"projects/p/subscriptions/play"}"#
    }

    /// A Google push of a `oneTimeProductNotification` (1: purchased).
    static func googleOneTimePush(token: String, sku: String, messageId: String, eventTime: String) -> String {
        let data = #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(millis(eventTime))","oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"\#(token)","sku":"\#(sku)"}}"#
        return #"{"type":"googleNotification","message":{"data":"\#(Data(data.utf8).base64EncodedString())","messageId":"\#(messageId)","publishTime":"2026-01-01T00:00:00Z"},"subscription":"projects/p/subscriptions/play"}"#
    }

    static func millis(_ time: String) -> Int64 {
        Int64((Fixture.time(time).timeIntervalSince1970 * 1000).rounded())
    }

    /// A SubscriptionPurchaseV2 as Google documents it, of one line item.
    static func subscriptionV2(order: String, product: String = "vip_month", expiry: String,
                               units: String? = "4", nanos: Int = 990_000_000, currency: String = "USD",
                               acknowledged: Bool = true, test: Bool = false, account: String? = nil) -> [String: Any] {
        var plan: [String: Any] = ["autoRenewEnabled": true]
        if let units { plan["recurringPrice"] = ["currencyCode": currency, "units": units, "nanos": nanos] }
        var answer: [String: Any] = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "US",
            "startTime": "2026-02-01T00:00:00Z", "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE",
            "latestOrderId": order,
            "acknowledgementState": acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING",
            "lineItems": [["productId": product, "expiryTime": expiry, "latestSuccessfulOrderId": order,
                           "autoRenewingPlan": plan, "offerDetails": ["basePlanId": "monthly"]]],
        ]
        if test { answer["testPurchase"] = [String: Any]() }
        if let account { answer["externalAccountIdentifiers"] = ["obfuscatedExternalAccountId": account] }
        return answer
    }

    /// A ProductPurchaseV2 of one consumable.
    static func productV2(order: String, product: String = "gem_100", at time: String = "2026-02-05T00:00:00Z",
                          acknowledged: Bool = true, account: String? = nil) -> [String: Any] {
        var answer: [String: Any] = [
            "kind": "androidpublisher#productPurchaseV2", "orderId": order, "regionCode": "US",
            "purchaseStateContext": ["purchaseState": "PURCHASED"], "purchaseCompletionTime": time,
            "acknowledgementState": acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING",
            "productLineItem": [["productId": product, "productOfferDetails": ["quantity": 1, "refundableQuantity": 1,
                                                                               "consumptionState": "CONSUMPTION_STATE_YET_TO_BE_CONSUMED"]]],
        ]
        if let account { answer["obfuscatedExternalAccountId"] = account }
        return answer
    }

    static func googleState(subscriptions: [String: Any] = [:], products: [String: Any] = [:],
                            voided: [[String: Any]] = [], faults: [[String: Any]] = []) -> [String: Any] {
        ["google": ["packageName": package, "subscriptionsV2": subscriptions, "productsV2": products,
                    "voidedPurchases": voided, "voidedMaxAgeDays": NSNull()] as [String: Any],
         "apple": ["bundleId": package] as [String: Any],
         "faults": faults]
    }

    /// The purchase line of an SDK report for Google Play.
    static func googlePurchase(seq: String, user: String = "u1", product: String = "vip_month",
                               type: String = "AUTO_RENEWABLE", token: String, order: String,
                               at time: String, expiry: String? = nil, price: String = "4.99") -> String {
        var fields: [String: String?] = [
            "paymentSeq": "\"\(seq)\"", "userId": "\"\(user)\"", "storeCode": "\"GG\"", "productId": "\"\(product)\"",
            "productType": "\"\(type)\"", "price": "\"\(price)\"", "purchaseToken": "\"\(token)\"",
            "transactionId": "\"\(order)\"", "purchaseTime": "\"\(time)\"",
        ]
        if let expiry { fields["expiryTime"] = "\"\(expiry)\"" }
        return Fixture.purchaseLine(fields)
    }
}
