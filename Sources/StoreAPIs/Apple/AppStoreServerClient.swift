import Foundation
import Logging
import NIOHTTP1
import Synchronization

/// The App Store Server API for one app (one bundle id: the JWT's `bid`), production or sandbox
/// per call. The ledger makes one client per bundle id of `LEDGER_APPLE_BUNDLE_IDS`, all on the
/// same `StoreHTTPClient`.
///
/// Each request carries an ES256 JWT signed with the In-App Purchase key. A JWT lives
/// `jwtLifetime` (default 20 minutes; Apple allows 60) and is reused for `jwtReuse` (default 5
/// minutes), so it is always far from expiry when sent; on a 401 a new one is made and the call
/// tried once more. Errors are `StoreAPIError`s, Apple's `errorCode` and `errorMessage` kept; this
/// client never retries a transient failure itself (the ledger's jobs do).
public final class AppStoreServerClient: Sendable {
    /// Apple's production base URL.
    public static let defaultProductionURL = "https://api.storekit.itunes.apple.com"
    /// Apple's sandbox base URL.
    public static let defaultSandboxURL = "https://api.storekit-sandbox.itunes.apple.com"

    public let bundleId: String
    let key: AppStoreAPIKey
    let productionURL: String
    let sandboxURL: String
    let http: StoreHTTPClient
    let jwtLifetime: Int64
    let jwtReuse: TimeInterval
    let now: @Sendable () -> Date
    private let cached = Mutex<(jwt: String, made: Date)?>(nil)

    /// - Parameters:
    ///   - key: the In-App Purchase key and its ids.
    ///   - bundleId: the app asked about.
    ///   - productionURL, sandboxURL: `LEDGER_APPLE_API_URL`, `LEDGER_APPLE_API_SANDBOX_URL`.
    ///   - http: the shared client; its owner shuts it down.
    ///   - jwtLifetime: seconds from a JWT's `iat` to its `exp` (at most 3600).
    ///   - jwtReuse: seconds a JWT is reused before a new one is signed (well under its lifetime).
    public init(key: AppStoreAPIKey, bundleId: String, productionURL: String = AppStoreServerClient.defaultProductionURL,
                sandboxURL: String = AppStoreServerClient.defaultSandboxURL, http: StoreHTTPClient,
                jwtLifetime: Int64 = 1200, jwtReuse: TimeInterval = 300,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.bundleId = bundleId
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.http = http
        self.jwtLifetime = min(jwtLifetime, 3600)
        self.jwtReuse = min(jwtReuse, TimeInterval(min(jwtLifetime, 3600)) / 2)
        self.now = now
    }

    /// PUT `/inApps/v2/transactions/consumption/{transactionId}` (Send Consumption Information):
    /// answers a `CONSUMPTION_REQUEST`. Apple answers 202 with no body.
    public func sendConsumptionInformation(transactionId: String, body: ConsumptionRequest,
                                           environment: AppStoreEnvironment) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(body)
        _ = try await call(route: "consumption.send", method: .PUT, environment: environment,
                           path: "/inApps/v2/transactions/consumption/" + StorePath.segment(transactionId), body: data)
    }

    /// POST `/inApps/v1/notifications/history` (Get Notification History): one page of the
    /// notifications Apple sent (or tried to send) between the request's dates.
    public func notificationHistory(_ request: NotificationHistoryRequest, paginationToken: String? = nil,
                                    environment: AppStoreEnvironment) async throws -> NotificationHistoryPage {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(request)
        let answer = try await call(route: "notifications.history", method: .POST, environment: environment,
                                    path: "/inApps/v1/notifications/history",
                                    query: paginationToken.map { [("paginationToken", $0)] } ?? [], body: data)
        do {
            return try JSONDecoder().decode(NotificationHistoryPage.self, from: answer.body)
        } catch {
            throw StoreAPIError(store: .appStore, route: "notifications.history", kind: .malformedAnswer,
                                detail: GooglePlayClient.decodingDetail(error))
        }
    }

    /// One page of the notifications between `startDate` and `endDate`.
    public func notificationHistory(startDate: Date, endDate: Date, paginationToken: String? = nil,
                                    environment: AppStoreEnvironment) async throws -> NotificationHistoryPage {
        try await notificationHistory(NotificationHistoryRequest(startDate: startDate, endDate: endDate),
                                      paginationToken: paginationToken, environment: environment)
    }

    /// Every notification's `signedPayload` between the request's dates, page after page, oldest
    /// first. A failure on any page throws (nothing is returned half).
    public func allNotificationHistory(_ request: NotificationHistoryRequest,
                                       environment: AppStoreEnvironment) async throws -> [String] {
        var all: [String] = []
        var token: String?
        var seen: Set<String> = []
        repeat {
            let page = try await notificationHistory(request, paginationToken: token, environment: environment)
            all += page.signedPayloads
            token = page.hasMore ? page.paginationToken : nil
            if let token, !seen.insert(token).inserted {
                throw StoreAPIError(store: .appStore, route: "notifications.history", kind: .malformedAnswer,
                                    detail: "a pagination token came back twice")
            }
        } while token != nil
        return all
    }

    /// Every notification between `startDate` and `endDate`.
    public func allNotificationHistory(startDate: Date, endDate: Date,
                                       environment: AppStoreEnvironment) async throws -> [String] {
        try await allNotificationHistory(NotificationHistoryRequest(startDate: startDate, endDate: endDate),
                                         environment: environment)
    }

    // MARK: - The calls

    /// The cached JWT, or a new one when it is older than `jwtReuse` or is `refused`.
    package func jwt(refused: String? = nil) throws -> String {
        let now = now()
        return try cached.withLock { cached in
            if let current = cached, current.jwt != refused, now.timeIntervalSince(current.made) < jwtReuse,
               current.made <= now {
                return current.jwt
            }
            let jwt = try key.jwt(bundleId: bundleId, now: now, lifetime: jwtLifetime)
            cached = (jwt, now)
            return jwt
        }
    }

    func call(route: String, method: HTTPMethod, environment: AppStoreEnvironment, path: String,
              query: [(String, String)] = [], body: Data?) async throws -> StoreHTTPClient.Answer {
        let base = environment == .production ? productionURL : sandboxURL
        func signed(refusing refused: String? = nil) throws -> String {
            do {
                return try jwt(refused: refused)
            } catch {
                throw StoreAPIError(store: .appStore, route: route, kind: .invalidRequest, detail: "cannot sign the JWT")
            }
        }
        return try await http.sendAuthorized(
            store: .appStore, route: route, method: method, url: StorePath.url(base: base, path: path, query: query),
            body: body, credential: try signed(), renew: { try signed(refusing: $0) },
            refusal: { Self.error(route: route, answer: $0) })
    }

    /// Apple's error answer `{"errorCode": 4040010, "errorMessage": "…"}` (none for a 401).
    static func error(route: String, answer: StoreHTTPClient.Answer) -> StoreAPIError {
        var code: String?
        var message: String?
        if let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any] {
            if let number = object["errorCode"] as? NSNumber { code = number.stringValue }
            else if let text = object["errorCode"] as? String { code = text }
            message = object["errorMessage"] as? String
        }
        return StoreAPIError(store: .appStore, route: route, kind: .status(answer.status), storeCode: code,
                             storeMessage: message,
                             retryAfter: answer.headers.first(name: "Retry-After").flatMap { RetryAfter.delay($0) })
    }
}
