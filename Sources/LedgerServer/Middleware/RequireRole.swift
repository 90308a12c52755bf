import Foundation
import HTTPTypes
import Hummingbird

/// Admits a request only with `Authorization: Bearer <API key>` of a live key whose role is one
/// of `roles`: 401 `UNAUTHORIZED` without a key or with an unknown or revoked one, 403
/// `FORBIDDEN` with a key of another role. Runs before the route reads the body, so nothing is
/// written for a refused request.
struct RequireRole: RouterMiddleware {
    typealias Context = LedgerRequestContext
    let roles: Set<APIKeyRole>
    let keys: APIKeyRing

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let key = request.bearerToken, key.hasPrefix(APIKey.prefix) else {
            throw APIError.unauthorized("an API key is required: Authorization: Bearer lk_…")
        }
        guard let identity = try await APIError.mappingDatabase({ try await keys.identify(key) }) else {
            throw APIError.unauthorized("the API key is unknown or revoked")
        }
        guard roles.contains(identity.role) else {
            throw APIError(.forbidden, "FORBIDDEN",
                           "a \(identity.role.rawValue) key may not use this route (it takes \(roles.map(\.rawValue).sorted().joined(separator: " or ")))")
        }
        var context = context
        context.apiKeyId = identity.id
        return try await next(request, context)
    }
}

extension Request {
    /// The token of `Authorization: Bearer <token>`, if the header has that form.
    var bearerToken: String? {
        guard let value = headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}

extension APIError {
    static func unauthorized(_ message: String) -> APIError {
        APIError(.unauthorized, "UNAUTHORIZED", message, headers: [.wwwAuthenticate: "Bearer"])
    }
}
