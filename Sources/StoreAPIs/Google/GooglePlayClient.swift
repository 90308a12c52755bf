import Foundation
import Logging
import NIOHTTP1

/// The Play Developer API (`androidpublisher` v3), as a service account uses it.
///
/// One access token serves every call of one client: it is asked for on first use, reused until a
/// minute (`refreshMargin`) before it expires, asked for once however many calls need it at the
/// same time, and replaced once when the API answers 401, the call then tried once more. Errors
/// are `StoreAPIError`s; this client never retries a transient failure itself (the ledger's jobs do).
public final class GooglePlayClient: Sendable {
    /// Google's production base URL.
    public static let defaultBaseURL = "https://androidpublisher.googleapis.com"

    let baseURL: String
    let http: StoreHTTPClient
    let tokens: GoogleAccessTokens

    /// - Parameters:
    ///   - account: the service account whose key signs token requests.
    ///   - baseURL: the API's base URL (`LEDGER_GOOGLE_API_URL`).
    ///   - http: the shared client; its owner shuts it down.
    ///   - refreshMargin: how long before its expiry a token is replaced (default 60 s).
    ///   - now: the clock that judges a token's age (tests set their own).
    public init(account: GoogleServiceAccount, baseURL: String = GooglePlayClient.defaultBaseURL,
                http: StoreHTTPClient, refreshMargin: TimeInterval = 60,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.baseURL = baseURL
        self.http = http
        self.tokens = GoogleAccessTokens(account: account, http: http, refreshMargin: refreshMargin, now: now)
    }

    /// GET `purchases.subscriptionsv2/tokens/{token}`: a subscription purchase's state, line items,
    /// prices and orders.
    public func subscriptionV2(packageName: String, token: String) async throws -> SubscriptionPurchaseV2 {
        let path = Self.purchases(packageName) + "subscriptionsv2/tokens/" + StorePath.segment(token)
        return try decode(await call(route: "subscriptionsv2.get", method: .GET, path: path), route: "subscriptionsv2.get")
    }

    /// GET `purchases.productsv2/tokens/{token}`: a one-time product purchase.
    public func productV2(packageName: String, token: String) async throws -> ProductPurchaseV2 {
        let path = Self.purchases(packageName) + "productsv2/tokens/" + StorePath.segment(token)
        return try decode(await call(route: "productsv2.get", method: .GET, path: path), route: "productsv2.get")
    }

    /// POST `purchases.subscriptions/{subscriptionId}/tokens/{token}:acknowledge`. Google answers
    /// success for a purchase already acknowledged.
    public func acknowledgeSubscription(packageName: String, subscriptionId: String, token: String) async throws {
        let path = Self.purchases(packageName) + "subscriptions/" + StorePath.segment(subscriptionId) + "/tokens/"
            + StorePath.segment(token) + ":acknowledge"
        _ = try await call(route: "subscriptions.acknowledge", method: .POST, path: path, body: Data("{}".utf8))
    }

    /// POST `purchases.products/{productId}/tokens/{token}:acknowledge`.
    public func acknowledgeProduct(packageName: String, productId: String, token: String) async throws {
        let path = Self.purchases(packageName) + "products/" + StorePath.segment(productId) + "/tokens/"
            + StorePath.segment(token) + ":acknowledge"
        _ = try await call(route: "products.acknowledge", method: .POST, path: path, body: Data("{}".utf8))
    }

    /// GET `purchases.voidedpurchases`: one page of the purchases voided between `startTime` and
    /// `endTime` (Google keeps 30 days), subscriptions included (`type=1`). `pageToken` is the
    /// previous page's `nextPageToken` (the time window travels with it).
    /// `includeQuantityBasedPartialRefund` also lists partial refunds of multi-quantity purchases
    /// (with `voidedQuantity`).
    public func voidedPurchases(packageName: String, startTime: Date, endTime: Date, pageToken: String? = nil,
                                maxResults: Int = 1000,
                                includeQuantityBasedPartialRefund: Bool = false) async throws -> VoidedPurchasesPage {
        var query: [(String, String)] = [
            ("startTime", String(Self.milliseconds(startTime))), ("endTime", String(Self.milliseconds(endTime))),
            ("type", "1"), ("maxResults", String(maxResults)),
        ]
        if includeQuantityBasedPartialRefund { query.append(("includeQuantityBasedPartialRefund", "true")) }
        if let pageToken { query.append(("token", pageToken)) }
        let answer = try await call(route: "voidedpurchases.list", method: .GET,
                                    path: Self.purchases(packageName) + "voidedpurchases", query: query)
        return try decode(answer, route: "voidedpurchases.list")
    }

    /// Every voided purchase between `startTime` and `endTime`, reading page after page, in the
    /// order Google lists them. A failure on any page throws (nothing is returned half).
    public func allVoidedPurchases(packageName: String, startTime: Date, endTime: Date,
                                   includeQuantityBasedPartialRefund: Bool = false) async throws -> [VoidedPurchase] {
        var all: [VoidedPurchase] = []
        var pageToken: String?
        var seen: Set<String> = []
        repeat {
            let page = try await voidedPurchases(packageName: packageName, startTime: startTime, endTime: endTime,
                                                 pageToken: pageToken,
                                                 includeQuantityBasedPartialRefund: includeQuantityBasedPartialRefund)
            all += page.voidedPurchases
            pageToken = page.nextPageToken
            if let pageToken, !seen.insert(pageToken).inserted {
                throw StoreAPIError(store: .googlePlay, route: "voidedpurchases.list", kind: .malformedAnswer,
                                    detail: "a page token came back twice")
            }
        } while pageToken != nil
        return all
    }

    // MARK: - The calls

    static func purchases(_ packageName: String) -> String {
        "/androidpublisher/v3/applications/" + StorePath.segment(packageName) + "/purchases/"
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// One authorized call: with the shared token, and once more with a new token after a 401.
    func call(route: String, method: HTTPMethod, path: String, query: [(String, String)] = [],
              body: Data? = nil) async throws -> StoreHTTPClient.Answer {
        try await http.sendAuthorized(
            store: .googlePlay, route: route, method: method, url: StorePath.url(base: baseURL, path: path, query: query),
            body: body, credential: try await tokens.token(),
            renew: { try await tokens.token(replacing: $0) },
            refusal: { GoogleErrorBody.error(store: .googlePlay, route: route, answer: $0) })
    }

    func decode<T: Decodable>(_ answer: StoreHTTPClient.Answer, route: String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: answer.body)
        } catch {
            throw StoreAPIError(store: .googlePlay, route: route, kind: .malformedAnswer,
                                detail: Self.decodingDetail(error))
        }
    }

    /// Which field could not be read, without any value.
    static func decodingDetail(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not JSON" }
        let path: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            path = context.codingPath
        @unknown default: path = []
        }
        let field = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        return field.isEmpty ? "not the documented JSON" : "field \(field)"
    }
}
