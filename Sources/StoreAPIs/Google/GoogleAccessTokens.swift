import Foundation
import NIOHTTP1

/// The Play Developer API's access token, shared by every caller of one `GooglePlayClient`.
///
/// The token is asked for once and reused until `refreshMargin` before it expires; callers who
/// need one while a request for it is under way wait for that request instead of sending their
/// own. A token the API refused (401) is replaced once, by whichever caller saw the refusal first.
actor GoogleAccessTokens {
    struct Token: Sendable {
        var value: String
        var expires: Date
    }

    let account: GoogleServiceAccount
    let http: StoreHTTPClient
    let refreshMargin: TimeInterval
    let now: @Sendable () -> Date
    private var current: Token?
    private var inFlight: Task<Token, any Error>?

    static let route = "oauth2.token"

    init(account: GoogleServiceAccount, http: StoreHTTPClient, refreshMargin: TimeInterval,
         now: @escaping @Sendable () -> Date) {
        self.account = account
        self.http = http
        self.refreshMargin = refreshMargin
        self.now = now
    }

    /// A token that is not about to expire: the cached one, or a new one.
    func token() async throws -> String {
        if let current, isFresh(current) { return current.value }
        return try await refresh()
    }

    /// A token other than `refused` (one the API answered 401 to): a new one, unless another
    /// caller has already replaced it.
    func token(replacing refused: String) async throws -> String {
        if let current, current.value != refused, isFresh(current) { return current.value }
        if current?.value == refused { current = nil }
        return try await refresh()
    }

    private func isFresh(_ token: Token) -> Bool {
        token.expires.timeIntervalSince(now()) > refreshMargin
    }

    /// Joins the request under way, or starts one. The request runs in a task of its own, so a
    /// caller that is cancelled does not cancel it for the others.
    private func refresh() async throws -> String {
        if let inFlight { return try await inFlight.value.value }
        let task = Task { [account, http, now] in try await Self.fetch(account: account, http: http, now: now) }
        inFlight = task
        defer { inFlight = nil }
        let token = try await task.value
        current = token
        return token.value
    }

    /// POSTs the signed assertion to the account's `token_uri` (Google's "Using OAuth 2.0 for
    /// server to server applications": the JWT bearer grant).
    static func fetch(account: GoogleServiceAccount, http: StoreHTTPClient,
                      now: @Sendable () -> Date) async throws -> Token {
        // The token's age is judged by `now` (a test's clock); the assertion's times are the real
        // ones, as Google checks them against its own clock.
        let sent = now()
        let assertion: String
        do {
            assertion = try account.assertion(now: Date())
        } catch {
            throw StoreAPIError(store: .googleOAuth, route: route, kind: .invalidRequest, detail: "cannot sign the assertion")
        }
        let form = "grant_type=" + formEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&assertion=" + formEncode(assertion)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        headers.add(name: "Accept", value: "application/json")
        let answer = try await http.send(store: .googleOAuth, route: route, method: .POST, url: account.tokenURI,
                                         headers: headers, body: Data(form.utf8))
        guard (200..<300).contains(answer.status) else {
            throw GoogleErrorBody.error(store: .googleOAuth, route: route, answer: answer)
        }
        struct Body: Decodable {
            var access_token: String
            var expires_in: Int64?
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: answer.body), !body.access_token.isEmpty else {
            throw StoreAPIError(store: .googleOAuth, route: route, kind: .malformedAnswer)
        }
        return Token(value: body.access_token, expires: sent.addingTimeInterval(TimeInterval(body.expires_in ?? 3600)))
    }

    /// `application/x-www-form-urlencoded`: everything but unreserved characters percent-encoded.
    static func formEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: StorePath.unreserved) ?? text
    }
}
