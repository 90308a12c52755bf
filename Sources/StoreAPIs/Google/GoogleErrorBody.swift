import Foundation

/// Google's error answers: the APIs' `{"error": {"code", "message", "errors": [{"reason"}], "status"}}`
/// and the token endpoint's `{"error": "invalid_grant", "error_description"}` (RFC 6749 §5.2).
enum GoogleErrorBody {
    static func error(store: StoreAPIError.Store, route: String, answer: StoreHTTPClient.Answer) -> StoreAPIError {
        var code: String?
        var message: String?
        if let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any] {
            if let error = object["error"] as? [String: Any] {
                let first = (error["errors"] as? [[String: Any]])?.first
                code = (first?["reason"] as? String) ?? (error["status"] as? String)
                message = error["message"] as? String
            } else if let error = object["error"] as? String {
                code = error
                message = object["error_description"] as? String
            }
        }
        return StoreAPIError(store: store, route: route, kind: .status(answer.status), storeCode: code,
                             storeMessage: message,
                             retryAfter: answer.headers.first(name: "Retry-After").flatMap { RetryAfter.delay($0) })
    }
}
