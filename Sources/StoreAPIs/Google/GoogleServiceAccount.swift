import _CryptoExtras
import Crypto
import Foundation

/// A Google service account key, as the Cloud console issues it (a JSON file): the RSA key that
/// signs token requests, its id, the account's e-mail and where tokens are asked for.
///
/// Its `description` names the account, never the key.
public struct GoogleServiceAccount: Sendable, CustomStringConvertible {
    /// The account, e.g. `ledger@project.iam.gserviceaccount.com`: the assertion's `iss`.
    public let clientEmail: String
    /// The key's id: the assertion's header `kid`.
    public let privateKeyId: String
    /// Where the assertion is exchanged for an access token.
    public let tokenURI: String
    let privateKey: _RSA.Signing.PrivateKey

    /// Why a key file was refused. Never quotes the file's content.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not a JSON object.
        case notJSON
        /// A required field is missing or empty.
        case missingField(String)
        /// `type` is not `service_account`.
        case notServiceAccount
        /// `private_key` is not a PEM RSA private key of at least 2048 bits.
        case notRSAKey

        public var description: String {
            switch self {
            case .notJSON: return "not a service account key file (JSON object expected)"
            case .missingField(let name): return "the key file has no \(name)"
            case .notServiceAccount: return "the key file is not a service account key (type is not service_account)"
            case .notRSAKey: return "the key file's private_key is not a PEM RSA private key of 2048 bits or more"
            }
        }
    }

    /// Google's token endpoint, used when the file names none.
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    /// Reads a key file's content.
    public init(json: Data) throws(Problem) {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { throw .notJSON }
        func field(_ name: String) throws(Problem) -> String {
            guard let value = object[name] as? String, !value.isEmpty else { throw .missingField(name) }
            return value
        }
        if let type = object["type"] as? String, type != "service_account" { throw .notServiceAccount }
        let pem = try field("private_key")
        guard let key = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) else { throw .notRSAKey }
        self.privateKey = key
        self.clientEmail = try field("client_email")
        self.privateKeyId = try field("private_key_id")
        self.tokenURI = (object["token_uri"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultTokenURI
    }

    /// A key from its parts (tests, or keys held elsewhere than in a file).
    public init(clientEmail: String, privateKeyId: String, tokenURI: String = defaultTokenURI,
                privateKey: _RSA.Signing.PrivateKey) {
        self.clientEmail = clientEmail
        self.privateKeyId = privateKeyId
        self.tokenURI = tokenURI
        self.privateKey = privateKey
    }

    public var description: String { "GoogleServiceAccount(\(clientEmail))" }

    /// The Play Developer API's scope.
    public static let androidPublisherScope = "https://www.googleapis.com/auth/androidpublisher"
    /// The assertion's audience: Google's token endpoint, as Google documents it, whatever `token_uri` says.
    public static let tokenAudience = "https://oauth2.googleapis.com/token"

    /// The signed JWT asserting this account (RS256), valid for `lifetime` seconds from `now`
    /// (Google allows at most an hour).
    package func assertion(now: Date, lifetime: Int64 = 3600) throws -> String {
        let issuedAt = Int64(now.timeIntervalSince1970)
        let input = JWTSigningInput.make(
            header: ["alg": "RS256", "typ": "JWT", "kid": privateKeyId],
            claims: [
                "iss": .string(clientEmail), "scope": .string(Self.androidPublisherScope),
                "aud": .string(Self.tokenAudience), "iat": .integer(issuedAt), "exp": .integer(issuedAt + lifetime),
            ])
        let signature = try privateKey.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
