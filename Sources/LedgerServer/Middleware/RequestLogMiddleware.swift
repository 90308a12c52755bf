import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOHTTP1

/// One log line per request, when its response is handed over (a streamed one: when it ended): method, route (the matched
/// pattern, such as `/v1/users/{userId}/unconsumed`, never the path or query as sent, so neither
/// a user id nor a secret in the URL reaches the log), status, duration and request id. Headers
/// and bodies are never logged. Also counts the request in ``ServerMetrics``.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = LedgerRequestContext
    let logger: Logger
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let requestId = Self.requestId(request, context)
        // Any token is a valid method: keep the metric labels and log fields to a known few.
        let method = Self.knownMethods.contains(request.method.rawValue) ? request.method.rawValue : "OTHER"
        do {
            var response = try await next(request, context)
            response.headers[.requestId] = requestId
            let status = response.status.code
            let body = response.body
            guard body.contentLength == nil else {
                finish(method, context.endpointPath, status, start, requestId)
                return response
            }
            // A streamed body (the batch route): the line is written once the stream ended.
            response.body = ResponseBody { writer in
                do {
                    try await body.write(writer)
                } catch {
                    finish(method, context.endpointPath, status, start, requestId, cause: "the stream failed: \(type(of: error))")
                    throw error
                }
                finish(method, context.endpointPath, status, start, requestId)
            }
            return response
        } catch var error {
            if let routing = error as? HTTPError, routing.status == .notFound {
                // No route matched: answer in the same shape as every other refusal.
                error = APIError(.notFound, "NO_ROUTE", "no route for \(method) on this path")
            }
            // A body the HTTP parser refused mid-way: Hummingbird answers it 400 (in JSON: ParserErrorHandler).
            let parserError = error as? HTTPParserError
            let status = (error as? any HTTPResponseError)?.status.code ?? (parserError != nil ? 400 : 500)
            let cause = (error as? APIError)?.cause ?? parserError.map { "the request could not be parsed: \($0.debugDescription)" }
                ?? ((error is any HTTPResponseError) ? nil : "\(type(of: error))")
            finish(method, context.endpointPath, status, start, requestId, cause: cause)
            if var answer = error as? APIError {
                answer.headers[.requestId] = requestId
                throw answer
            }
            throw error
        }
    }

    private func finish(_ method: String, _ route: String?, _ status: Int, _ start: ContinuousClock.Instant,
                        _ requestId: String, cause: String? = nil) {
        let elapsed = ContinuousClock.now - start
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        let route = route ?? "unmatched"
        metrics.request(route: route, method: method, status: status, nanoseconds: nanoseconds)
        var metadata: Logger.Metadata = [
            "method": "\(method)", "route": "\(route)", "status": "\(status)",
            "duration_ms": "\(String(format: "%.3f", Double(nanoseconds) / 1e6))", "request_id": "\(requestId)",
        ]
        if let cause { metadata["error"] = "\(cause)" }
        logger.log(level: status >= 500 ? .error : .info, "request", metadata: metadata)
    }

    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

    /// The caller's `X-Request-Id` when it is a plain token of at most 64 characters, else Hummingbird's.
    private static func requestId(_ request: Request, _ context: Context) -> String {
        if let given = request.headers[.requestId], (1...64).contains(given.utf8.count),
           given.utf8.allSatisfy({ $0 < 0x80 && (isalnum(Int32($0)) != 0 || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E) }) {
            return given
        }
        return context.id
    }
}

extension HTTPField.Name {
    /// `X-Request-Id`: the id of the request's log line.
    static let requestId = HTTPField.Name("X-Request-Id")!
}
