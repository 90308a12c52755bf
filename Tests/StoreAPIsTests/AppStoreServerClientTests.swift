import LedgerTestSupport
import Foundation
import StoreAPIs
import Testing

/// The App Store Server API client over loopback HTTP against `fake-store-api`.
@Suite struct AppStoreServerClientTests {
    static let consumable = "2000000500"
    static let subscription = "2000000600"

    static func state(history: [String] = [], pageSize: Int = 20, faults: [[String: Any]] = []) -> [String: Any] {
        [
            "apple": [
                "bundleId": FakeStoreAPI.bundleId, "historyPageSize": pageSize,
                "transactions": [
                    consumable: unsignedJWS(#"{"transactionId":"2000000500","type":"Consumable"}"#),
                    subscription: unsignedJWS(#"{"transactionId":"2000000600","type":"Auto-Renewable Subscription"}"#),
                ],
                "notificationHistory": history,
            ] as [String: Any],
            "faults": faults,
        ]
    }

    static func client(_ fake: FakeStoreAPI, _ http: StoreHTTPClient) throws -> AppStoreServerClient {
        AppStoreServerClient(key: try fake.appleKey(), bundleId: FakeStoreAPI.bundleId, productionURL: fake.baseURL,
                             sandboxURL: fake.baseURL + "/", http: http)
    }

    /// A notification payload signed `minutesAgo` minutes ago (unsigned: the client passes it on).
    static func notification(_ uuid: String, minutesAgo: Int) -> String {
        let signed = Int64(Date().timeIntervalSince1970 * 1000) - Int64(minutesAgo) * 60_000
        return unsignedJWS(#"{"notificationType":"TEST","notificationUUID":"\#(uuid)","signedDate":\#(signed)}"#)
    }

    @Test func theJWTIsAcceptedAndAConsumptionAnswerIsSent() async throws {
        try await withFake(Self.state()) { fake, http in
            let client = try Self.client(fake, http)
            try await client.sendConsumptionInformation(
                transactionId: Self.consumable,
                body: ConsumptionRequest(deliveryStatus: .delivered, consumptionPercentage: 100_000,
                                         sampleContentProvided: false, refundPreference: .decline),
                environment: .production)
            try await client.sendConsumptionInformation(
                transactionId: Self.subscription,
                body: ConsumptionRequest(deliveryStatus: .undeliveredOther, sampleContentProvided: true),
                environment: .sandbox)
            let calls = try fake.calls()
            #expect(calls.map(\.method) == ["PUT", "PUT"])
            #expect(calls.map(\.path) == ["/inApps/v2/transactions/consumption/\(Self.consumable)",
                                          "/inApps/v2/transactions/consumption/\(Self.subscription)"])
            #expect(calls.allSatisfy { $0.auth == "ok" && $0.status == 202 })
            let first = try #require(calls[0].body)
            #expect(first["customerConsented"] as? Bool == true)
            #expect(first["deliveryStatus"] as? String == "DELIVERED")
            #expect(first["consumptionPercentage"] as? Int == 100_000)
            #expect(first["sampleContentProvided"] as? Bool == false)
            #expect(first["refundPreference"] as? String == "DECLINE")
            let second = try #require(calls[1].body)
            #expect(Set(second.keys) == ["customerConsented", "deliveryStatus", "sampleContentProvided"])
            #expect(second["sampleContentProvided"] as? Bool == true)
        }
    }

    @Test func theJWTHasTheDocumentedHeaderAndClaims() throws {
        let key = AppStoreAPIKey(privateKey: .init(), keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a")
        let jwt = try key.jwt(bundleId: "com.example.game", now: Date(timeIntervalSince1970: 1_800_000_000), lifetime: 1200)
        let parts = jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[0]))) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[1]))) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256" && header?["kid"] as? String == "ABC123DEFG" && header?["typ"] as? String == "JWT")
        #expect(claims?["iss"] as? String == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims?["aud"] as? String == "appstoreconnect-v1" && claims?["bid"] as? String == "com.example.game")
        #expect(claims?["iat"] as? Int == 1_800_000_000 && claims?["exp"] as? Int == 1_800_001_200)
        #expect(Base64URL.decode(parts[2])?.count == 64)
        // Never more than Apple's hour, whatever is asked.
        let long = try key.jwt(bundleId: "b", now: Date(timeIntervalSince1970: 0), lifetime: 86_400)
        let longClaims = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(long.split(separator: ".")[1]))) as? [String: Any]
        #expect(longClaims?["exp"] as? Int == 3600)
    }

    @Test func theJWTIsReusedForMinutesThenReplaced() async throws {
        let clock = TestClock()
        let http = StoreHTTPClient()
        let client = AppStoreServerClient(key: AppStoreAPIKey(privateKey: .init(), keyId: "K", issuerId: "I"),
                                          bundleId: "com.example.game", http: http, now: { clock.now })
        let first = try client.jwt()
        clock.advance(299)
        #expect(try client.jwt() == first)
        #expect(try client.jwt(refused: first) != first)
        let second = try client.jwt()
        clock.advance(301)
        #expect(try client.jwt() != second)
        try await http.shutdown()
    }

    @Test func a401GetsANewJWTAndTheCallIsTriedOnceMore() async throws {
        let faults: [[String: Any]] = [["method": "PUT", "pathRegex": "consumption/", "responses": [["status": 401], ["status": 401], ["status": 401]]]]
        try await withFake(Self.state(faults: faults)) { fake, http in
            let client = try Self.client(fake, http)
            let body = ConsumptionRequest(deliveryStatus: .delivered, sampleContentProvided: false)
            let error = try await #require(throws: StoreAPIError.self) {
                try await client.sendConsumptionInformation(transactionId: Self.consumable, body: body, environment: .production)
            }
            #expect(error.status == 401 && !error.isRetryable && error.store == .appStore)
            #expect(try fake.calls().count == 2)
            // One more refusal, then the store answers: the retry succeeds.
            try await client.sendConsumptionInformation(transactionId: Self.consumable, body: body, environment: .production)
            #expect(try fake.calls().map(\.status) == [401, 401, 401, 202])
        }
    }

    @Test func notificationHistoryIsReadOverEveryPage() async throws {
        let history = (0..<5).map { Self.notification("n-\($0)", minutesAgo: 50 - $0) }
        try await withFake(Self.state(history: history.reversed(), pageSize: 2)) { fake, http in
            let client = try Self.client(fake, http)
            let start = Date().addingTimeInterval(-3600), end = Date().addingTimeInterval(60)
            let payloads = try await client.allNotificationHistory(startDate: start, endDate: end, environment: .production)
            #expect(payloads == history)
            let calls = try fake.calls()
            #expect(calls.count == 3)
            #expect(calls.allSatisfy { $0.method == "POST" && $0.path == "/inApps/v1/notifications/history" && $0.status == 200 })
            #expect(calls[0].query["paginationToken"] == nil && calls[1].query["paginationToken"] != nil)
            #expect(calls[0].body?["startDate"] as? Int == Int((start.timeIntervalSince1970 * 1000).rounded(.down)))
            let page = try await client.notificationHistory(startDate: start, endDate: end, environment: .sandbox)
            #expect(page.signedPayloads == Array(history.prefix(2)) && page.hasMore && page.paginationToken != nil)
        }
    }

    @Test func faultsAreRetryableWithApplesRetryAfter() async throws {
        let retryAt = Int64(Date().timeIntervalSince1970 * 1000) + 600_000
        let faults: [[String: Any]] = [["method": "POST", "pathRegex": "notifications/history", "responses": [
            ["status": 429, "headers": ["Retry-After": String(retryAt)]], ["status": 503], ["close": true],
        ]]]
        try await withFake(Self.state(faults: faults)) { fake, http in
            let client = try Self.client(fake, http)
            func failure() async throws -> StoreAPIError {
                try await #require(throws: StoreAPIError.self) {
                    _ = try await client.notificationHistory(startDate: Date().addingTimeInterval(-60), endDate: Date(),
                                                             environment: .production)
                }
            }
            let before = Date().timeIntervalSince1970
            let limited = try await failure()
            let after = Date().timeIntervalSince1970
            #expect(limited.status == 429 && limited.isRetryable && limited.appleErrorCode == 4_290_000)
            // The instant Apple named, as a delay from when the answer was read (however slow the machine).
            let wait = try #require(limited.retryAfter)
            let at = Double(retryAt) / 1000
            #expect(wait >= at - after - 0.001 && wait <= at - before + 0.001, "\(wait) not in [\(at - after), \(at - before)]")
            let unavailable = try await failure()
            #expect(unavailable.status == 503 && unavailable.isRetryable && unavailable.appleErrorCode == 5_000_001)
            let dropped = try await failure()
            #expect(dropped.kind == .connection && dropped.isRetryable)
        }
    }

    @Test func clientErrorsFailForGoodWithApplesCode() async throws {
        try await withFake(Self.state()) { fake, http in
            let client = try Self.client(fake, http)
            let body = ConsumptionRequest(deliveryStatus: .delivered, sampleContentProvided: false)
            let unknown = try await #require(throws: StoreAPIError.self) {
                try await client.sendConsumptionInformation(transactionId: "2000009999", body: body, environment: .production)
            }
            #expect(unknown.status == 404 && !unknown.isRetryable && unknown.appleErrorCode == 4_040_010)
            #expect(unknown.storeMessage == "Transaction id not found.")
            let invalid = try await #require(throws: StoreAPIError.self) {
                try await client.sendConsumptionInformation(transactionId: "not-digits", body: body, environment: .production)
            }
            #expect(invalid.status == 400 && invalid.appleErrorCode == 4_000_006)
            // Apple allows no percentage on an auto-renewable subscription.
            let percentage = try await #require(throws: StoreAPIError.self) {
                try await client.sendConsumptionInformation(
                    transactionId: Self.subscription,
                    body: ConsumptionRequest(deliveryStatus: .delivered, consumptionPercentage: 100_000, sampleContentProvided: false),
                    environment: .production)
            }
            #expect(percentage.status == 400 && percentage.appleErrorCode == 4_000_209)
            let dates = try await #require(throws: StoreAPIError.self) {
                _ = try await client.notificationHistory(startDate: Date(), endDate: Date().addingTimeInterval(-60),
                                                         environment: .production)
            }
            #expect(dates.status == 400 && dates.appleErrorCode == 4_000_013 && dates.route == "notifications.history")
            for error in [unknown, invalid, percentage, dates] {
                let text = "\(error)" + String(reflecting: error)
                #expect(!text.contains("eyJ") && !text.contains("Bearer") && !text.contains("PRIVATE KEY"))
            }
        }
    }
}
