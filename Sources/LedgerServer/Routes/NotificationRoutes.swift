import Foundation
import Hummingbird
import Logging
import PurchaseLedger

/// The stores' webhooks. `POST /notifications/apple` takes App Store Server Notifications V2
/// bodies as Apple posts them: they carry Apple's signature, which the library verifies before
/// anything is written, so the route needs no key. `POST /notifications/google` takes Pub/Sub
/// push bodies, which are not signed: the request must show Pub/Sub's OIDC token, or the shared
/// secret in `?token=`, or an API key of role `notifications`. Each route takes only its own
/// store's body, and only what the store sends: a `payment` attached to a push, which a writer's
/// `POST /v1/batch` line may carry, is refused `INVALID_INPUT` here with nothing written. 2xx is answered only after the notification's event committed (200, or 202
/// when `parked`); a refusal is 4xx `{"code","message"}`; an unreachable database 503.
struct NotificationRoutes {
    let ledger: Ledger
    let metrics: ServerMetrics
    let keys: APIKeyRing
    let google: GooglePushAuthentication?
    let maxBodyBytes: Int

    func add(to router: Router<LedgerRequestContext>) {
        router.post("/notifications/apple") { request, _ in
            var request = request
            return try await receive(try await request.bytes(upTo: maxBodyBytes), from: .appStore)
        }
        router.post("/notifications/google") { request, _ in
            try await authenticateGoogle(request)
            var request = request
            return try await receive(try await request.bytes(upTo: maxBodyBytes), from: .googlePlay)
        }
    }

    /// Takes only what the store sends (`LedgerCommand(storeNotificationBody:)`): a `payment`
    /// attached to a push is refused, since the push credential is not a writer's.
    private func receive(_ body: [UInt8], from store: StoreCode) async throws -> Response {
        let object = try JSONBody.object(body)
        let command: LedgerCommand
        do {
            command = try LedgerCommand(storeNotificationBody: .object(object), from: store, stores: ledger.stores)
        } catch {
            metrics.outcome(CommandOutcome(rejected: error))
            throw APIError(error)
        }
        let outcome = try await APIError.mappingDatabase { try await ledger.execute(command) }
        metrics.outcome(outcome)
        return try outcome.response
    }

    /// Checks the push request's proof before its body is read.
    private func authenticateGoogle(_ request: Request) async throws {
        if let token = request.bearerToken {
            if token.hasPrefix(APIKey.prefix) {
                guard let identity = try await APIError.mappingDatabase({ try await keys.identify(token) }) else {
                    throw APIError.unauthorized("the API key is unknown or revoked")
                }
                guard identity.role == .notifications else {
                    throw APIError(.forbidden, "FORBIDDEN", "a \(identity.role.rawValue) key may not post notifications (it takes notifications)")
                }
                return
            }
            guard let oidc = google?.oidc else {
                throw APIError.unauthorized("OIDC tokens are not configured: set LEDGER_GOOGLE_PUSH_JWKS and LEDGER_GOOGLE_PUSH_AUDIENCE")
            }
            do {
                try await oidc.verify(token)
                return
            } catch let error as JWKSError {
                throw APIError(.serviceUnavailable, "UNAVAILABLE", "Google's signing keys cannot be had to check the token: \(error)",
                               headers: [.retryAfter: "10"])
            } catch {
                throw APIError.unauthorized("the OIDC token is refused: \(error)")
            }
        }
        if let secret = google?.sharedSecret, let given = request.uri.queryParameters.get("token") {
            guard APIKey.constantTimeEqual(APIKey.digest(String(given)), APIKey.digest(secret)) else {
                throw APIError.unauthorized("the push secret (?token=) is wrong")
            }
            return
        }
        throw APIError.unauthorized("a Pub/Sub push must show Authorization: Bearer <OIDC token>\(google?.sharedSecret != nil ? " or ?token=<secret>" : "")")
    }
}
