import LedgerJSON
import Foundation
import HTTPTypes
import Hummingbird
import Postgres
import PurchaseLedger

/// An error answer: an HTTP status and the JSON body `{"code","message"}`. Contract refusals use
/// the contract's codes; the server's own are `UNAUTHORIZED`, `FORBIDDEN`, `NO_ROUTE`,
/// `REQUEST_TIMEOUT`, `PAYLOAD_TOO_LARGE`, `OVERLOADED`, `UNAVAILABLE`, `INTERNAL` and `JOB_NOT_FAILED`.
public struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// The contract's code, or the server's own.
    public var code: String
    /// What happened, for a person; names the field or parameter when one is wrong.
    public var message: String
    /// Extra response headers (`Retry-After`, `WWW-Authenticate`).
    public var headers: HTTPFields = [:]
    /// What went wrong inside, for the log line only (a database error's description: never
    /// bound values or passwords); not sent.
    var cause: String?

    /// An answer with `status` and the body `{"code","message"}`.
    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// A contract refusal, with the status ``httpStatus(for:)`` gives its code.
    public init(_ error: LedgerError) {
        self.init(Self.httpStatus(for: error.code), error.code.rawValue, error.message)
    }

    /// `INVALID_INPUT` naming the field, as 400.
    static func invalid(_ field: String, _ problem: String) -> APIError {
        APIError(.badRequest, LedgerError.Code.invalidInput.rawValue, "\(field): \(problem)")
    }

    /// The status of each contract code: the request is malformed (400), not allowed for this
    /// caller or app (403), about nothing the ledger knows (404), or in conflict with what the
    /// ledger holds (409).
    public static func httpStatus(for code: LedgerError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidInput, .unknownStore, .unknownProductType, .signatureInvalid: .badRequest
        case .appMismatch, .userInvalid, .tokenInvalid: .forbidden
        case .notFound: .notFound
        case .productInvalid, .paymentConflict, .notConsumable, .refunded: .conflict
        }
    }

    /// The response: `status`, `headers` and the JSON body.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = Response.json(json, status: status)
        response.headers.append(contentsOf: headers)
        return response
    }

    /// The body, `{"code","message"}`.
    var json: String {
        var w = JSONWriter()
        w.beginObject()
        w.field("code", code)
        w.field("message", message)
        w.endObject()
        return w.string
    }
}

extension APIError {
    /// Runs `body`, turning a `PostgresError` into ``database(_:)``.
    static func mappingDatabase<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError {
            throw APIError.database(error)
        }
    }

    /// What a database failure answers: 503 when the database cannot be reached or the pool is
    /// closing (the caller should retry), 503 after a lost serialization race, else 500. The
    /// message never holds bound values, keys or passwords.
    static func database(_ error: PostgresError) -> APIError {
        var answer = classify(error)
        answer.cause = error.description
        return answer
    }

    private static func classify(_ error: PostgresError) -> APIError {
        let unreachable = error.kind == .connection || error.kind == .connectionBroken
            || error.sqlState?.isConnectionClass == true || error.message == "pool closed"
        if unreachable {
            return APIError(.serviceUnavailable, "UNAVAILABLE", "the database cannot be reached; try again",
                            headers: [.retryAfter: "1"])
        }
        if error.sqlState == .serializationFailure || error.sqlState == .deadlockDetected {
            return APIError(.serviceUnavailable, "UNAVAILABLE", "a concurrent write won a race; try again",
                            headers: [.retryAfter: "0"])
        }
        return APIError(.internalServerError, "INTERNAL",
                        "database error\(error.sqlState.map { " (SQLSTATE \($0))" } ?? "")")
    }
}

extension Response {
    /// A JSON response from text the ledger's `JSONWriter` made.
    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
