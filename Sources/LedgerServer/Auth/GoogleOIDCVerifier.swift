import LedgerJSON
import _CryptoExtras
import Crypto
import Foundation
import PurchaseLedger

/// Checks the OIDC token Pub/Sub puts in `Authorization: Bearer` of a push request: an RS256
/// JWT signed by one of the JWKS keys, issued by Google to `audience`, not expired, and (when
/// configured) for the push subscription's service account `email`.
public struct GoogleOIDCVerifier: Sendable {
    /// The keys tokens may be signed with, by key id.
    public var keys: JWKSSource
    /// The `aud` the push subscription was configured with (its push endpoint by default).
    public var audience: String
    /// Accepted `iss` values.
    public var issuers: Set<String>
    /// The service account the push subscription authenticates as; nil accepts any.
    public var email: String?
    /// Allowed clock difference for `exp`, `iat` and `nbf`.
    public var leeway: TimeInterval = 60

    /// A verifier of tokens signed by one of `keys` (a fixed set, or one fetched from a URL).
    public init(keys: JWKSSource, audience: String, email: String? = nil,
                issuers: Set<String> = ["https://accounts.google.com", "accounts.google.com"]) {
        self.keys = keys
        self.audience = audience
        self.email = email
        self.issuers = issuers
    }

    /// A verifier of tokens signed by one of the fixed `keys`.
    public init(keys: JWKS, audience: String, email: String? = nil,
                issuers: Set<String> = ["https://accounts.google.com", "accounts.google.com"]) {
        self.init(keys: JWKSSource(keys), audience: audience, email: email, issuers: issuers)
    }

    /// Throws ``TokenError`` naming the failed check, or ``JWKSError`` when no key set can be
    /// had to check it with; returns normally when the token is good.
    public func verify(_ token: String, now: Date = Date()) async throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
              let payloadBytes = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
              let header = (try? JSONParser.parse(headerBytes))?.objectValue,
              let claims = (try? JSONParser.parse(payloadBytes))?.objectValue
        else { throw TokenError("the token is not a JWT (three base64url parts of JSON)") }
        guard header["alg"]?.stringValue == "RS256" else { throw TokenError("alg: expected RS256") }
        guard let kid = header["kid"]?.stringValue, let key = try await keys.key(kid) else {
            throw TokenError("kid: not a key of the configured JWKS")
        }
        let signed = Array((parts[0] + "." + parts[1]).utf8)
        guard key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signed,
                                   padding: .insecurePKCS1v1_5) else {
            throw TokenError("the signature does not verify")
        }
        guard let issuer = claims["iss"]?.stringValue, issuers.contains(issuer) else {
            throw TokenError("iss: not an accepted issuer")
        }
        let audiences = claims["aud"]?.stringValue.map { [$0] } ?? claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard audiences.contains(audience) else { throw TokenError("aud: not this endpoint's audience") }
        let time = now.timeIntervalSince1970
        guard let exp = claims["exp"]?.int64Value else { throw TokenError("exp: missing") }
        guard Double(exp) + leeway > time else { throw TokenError("exp: the token has expired") }
        if let iat = claims["iat"]?.int64Value, Double(iat) - leeway > time { throw TokenError("iat: issued in the future") }
        if let nbf = claims["nbf"]?.int64Value, Double(nbf) - leeway > time { throw TokenError("nbf: not valid yet") }
        if let email {
            guard claims["email"]?.stringValue == email, claims["email_verified"]?.boolValue != false else {
                throw TokenError("email: not the push subscription's service account")
            }
        }
    }

    /// Why a token was refused (never holds the token).
    public struct TokenError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
