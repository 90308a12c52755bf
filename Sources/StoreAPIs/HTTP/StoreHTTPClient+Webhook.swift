import Foundation
import NIOHTTP1

extension StoreHTTPClient {
    /// One webhook delivery: POSTs `body` (JSON) to `url` with `headers`. Returns when the
    /// receiver answers 2xx; any other answer, a timeout or a failed connection throws a
    /// ``StoreAPIError`` of ``StoreAPIError/Store/webhook`` that names the status (and the
    /// receiver's `Retry-After`), never the URL, a header or the body.
    public func deliverWebhook(url: String, headers: [(String, String)], body: Data) async throws {
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name: name, value: value) }
        let answer = try await send(store: .webhook, route: "deliver", method: .POST, url: url, headers: fields, body: body)
        guard (200..<300).contains(answer.status) else {
            throw StoreAPIError(store: .webhook, route: "deliver", kind: .status(answer.status),
                                retryAfter: answer.headers.first(name: "Retry-After").flatMap { RetryAfter.delay($0) })
        }
    }
}
