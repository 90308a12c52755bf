import Crypto
import Foundation

/// An App Store Connect In-App Purchase key (the `.p8` file, a PKCS#8 P-256 key) and its ids: what
/// signs the App Store Server API's JWTs. Its `description` names the ids, never the key.
public struct AppStoreAPIKey: Sendable, CustomStringConvertible {
    /// The key's id (App Store Connect shows it beside the key): the JWT header's `kid`.
    public let keyId: String
    /// The team's issuer id (a UUID): the JWT's `iss`.
    public let issuerId: String
    let privateKey: P256.Signing.PrivateKey

    /// Why a `.p8` file was refused. Never quotes the file's content.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not a PEM P-256 private key (an RSA key, a certificate, another curve, garbage).
        case notP256Key

        public var description: String { "not a PEM P-256 private key (an App Store Connect .p8 key expected)" }
    }

    /// A key from the `.p8` file's PEM text.
    public init(pem: String, keyId: String, issuerId: String) throws(Problem) {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else { throw .notP256Key }
        self.init(privateKey: key, keyId: keyId, issuerId: issuerId)
    }

    public init(privateKey: P256.Signing.PrivateKey, keyId: String, issuerId: String) {
        self.privateKey = privateKey
        self.keyId = keyId
        self.issuerId = issuerId
    }

    public var description: String { "AppStoreAPIKey(kid \(keyId), issuer \(issuerId))" }

    /// A signed JWT for `bundleId` (Apple's "Generating JSON Web Tokens for API requests"): header
    /// alg ES256, kid, typ JWT; claims iss, iat, exp (`lifetime` seconds on, at most 3600), aud
    /// `appstoreconnect-v1`, bid. The signature is raw r‖s, as JWS requires.
    package func jwt(bundleId: String, now: Date, lifetime: Int64) throws -> String {
        let issuedAt = Int64(now.timeIntervalSince1970)
        let input = JWTSigningInput.make(
            header: ["alg": "ES256", "kid": keyId, "typ": "JWT"],
            claims: [
                "iss": .string(issuerId), "iat": .integer(issuedAt), "exp": .integer(issuedAt + min(lifetime, 3600)),
                "aud": .string("appstoreconnect-v1"), "bid": .string(bundleId),
            ])
        let signature = try privateKey.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
