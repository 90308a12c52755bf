import Foundation

/// A call to a store's API that did not give the answer asked for: the store answered an error
/// status, the answer could not be read, the request timed out or the connection failed.
///
/// It names the call by its route template (`subscriptionsv2.get`), never by its path: purchase
/// tokens travel in Google's paths and are secrets. Its `description` holds no token, JWT or key
/// material, so it can be logged, stored with a failed job and shown by `ledger jobs list`.
public struct StoreAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which API was called.
    public enum Store: String, Sendable, Equatable {
        /// Google's OAuth 2.0 token endpoint (the service account's `token_uri`).
        case googleOAuth = "google-oauth"
        /// The Play Developer API (`androidpublisher` v3).
        case googlePlay = "google-play"
        /// The App Store Server API.
        case appStore = "app-store"
        /// A webhook receiver of the ledger's own (README, "Webhooks"): not a store, sent by the
        /// same client.
        case webhook = "webhook"
    }

    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The store answered this HTTP status (not 2xx).
        case status(Int)
        /// No answer within the connect or request timeout.
        case timeout
        /// The connection could not be made or was dropped before the answer was complete.
        case connection
        /// A 2xx answer whose body is not what the store documents.
        case malformedAnswer
        /// The request could not be made: an invalid URL or a JWT that could not be signed.
        case invalidRequest
    }

    /// The API called.
    public var store: Store
    /// The call, as a template (`subscriptionsv2.get`, `consumption.send`), never the path.
    public var route: String
    /// What went wrong.
    public var kind: Kind
    /// The store's own error code: Google's `errors[0].reason` (else its `status`, for the token
    /// endpoint its `error`), Apple's numeric `errorCode` as text. Nil when the store gave none.
    public var storeCode: String?
    /// The store's own error message (Google's `message` or `error_description`, Apple's
    /// `errorMessage`), at most 300 characters.
    public var storeMessage: String?
    /// Seconds to wait before trying again, from the answer's `Retry-After`: delta seconds, an
    /// HTTP date, or Apple's UNIX time in milliseconds (a number above 10¹¹), as a delay from
    /// when the answer arrived. Nil when the answer had none (or it could not be read).
    public var retryAfter: TimeInterval?
    /// A short, secret-free note about a failure that is not the store's (`connection refused`).
    public var detail: String?

    /// An error; `storeMessage` and `detail` are cut to 300 characters.
    public init(store: Store, route: String, kind: Kind, storeCode: String? = nil, storeMessage: String? = nil,
                retryAfter: TimeInterval? = nil, detail: String? = nil) {
        self.store = store
        self.route = route
        self.kind = kind
        self.storeCode = storeCode
        self.storeMessage = storeMessage.map { String($0.prefix(300)) }
        self.retryAfter = retryAfter
        self.detail = detail.map { String($0.prefix(300)) }
    }

    /// The HTTP status the store answered, when it answered one.
    public var status: Int? {
        if case .status(let status) = kind { return status }
        return nil
    }

    /// Apple's numeric `errorCode` (`4040010`), when the App Store answered one.
    public var appleErrorCode: Int? {
        store == .appStore ? storeCode.flatMap { Int($0) } : nil
    }

    /// Whether trying again later can succeed: 408, 429, any 5xx, a timeout or a connection
    /// failure. Any other answer (400, 401 after a fresh credential, 403, 404) fails for good,
    /// except from a webhook receiver.
    public var isRetryable: Bool {
        // A webhook receiver that answers anything but 2xx may be fixed and come back: every
        // failure but a request that cannot be made is tried again, for up to three days.
        if store == .webhook { return kind != .invalidRequest }
        switch kind {
        case .status(let status): return status == 408 || status == 429 || (500...599).contains(status)
        case .timeout, .connection: return true
        case .malformedAnswer, .invalidRequest: return false
        }
    }

    public var description: String {
        var text = "\(store.rawValue) \(route): "
        switch kind {
        case .status(let status): text += "HTTP \(status)"
        case .timeout: text += "timed out"
        case .connection: text += "connection failed"
        case .malformedAnswer: text += "malformed answer"
        case .invalidRequest: text += "invalid request"
        }
        if let storeCode { text += " \(storeCode)" }
        if let storeMessage { text += ": \(storeMessage)" }
        if let detail { text += " (\(detail))" }
        if let retryAfter { text += "; retry after \(Int(retryAfter.rounded(.up))) s" }
        return text
    }
}
