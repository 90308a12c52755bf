import _CryptoExtras
import Crypto
import Foundation
import LedgerServer
import LedgerTestSupport
import PurchaseLedger

/// Store notifications minted at test time: App Store bodies signed by a test chain the server
/// trusts, Pub/Sub push bodies, and Pub/Sub OIDC tokens signed by an RSA key of the test's own.
enum StoreMint {
    static let bundle = "com.example.game"
    static let chain = TestAppleChain()

    /// What the tests accept: the test chain's root, the example bundle and package.
    static var stores: StoreConfiguration {
        StoreConfiguration(appleBundleIds: [bundle], appleEnvironments: ["Production", "Sandbox"],
                           appleRoots: chain.roots, googlePackageNames: [bundle])
    }

    static func ms(_ iso: String) -> Int64 { Int64((Fixture.time(iso).timeIntervalSince1970 * 1000).rounded()) }

    /// Apple's POST body for a `SUBSCRIBED` notification of a new lineage.
    static func appleSubscribed(uuid: String, transaction id: String, account: String = "acct-1") -> String {
        let transaction = """
            {"transactionId":"\(id)","originalTransactionId":"\(id)","bundleId":"\(bundle)","productId":"premium_month",\
            "purchaseDate":\(ms("2026-03-01T00:00:00Z")),"expiresDate":\(ms("2026-04-01T00:00:00Z")),\
            "type":"Auto-Renewable Subscription","environment":"Production","price":9990,"currency":"USD",\
            "signedDate":\(ms("2026-03-01T00:00:00Z")),"inAppOwnershipType":"PURCHASED","appAccountToken":"\(account)"}
            """
        let payload = """
            {"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":"\(uuid)","version":"2.0",\
            "signedDate":\(ms("2026-03-01T00:00:00Z")),"data":{"bundleId":"\(bundle)","environment":"Production",\
            "appAppleId":1234567890,"signedTransactionInfo":{"$jws":\(transaction)}}}
            """
        return "{\"signedPayload\":\"\(chain.signNested(payload))\"}"
    }

    /// A Pub/Sub push body of a `testNotification` (ignored by the ledger, kept in the log).
    static func googlePush(messageId: String, package: String = bundle) -> String {
        let notification = #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(ms("2026-03-01T00:00:00Z"))","testNotification":{"version":"1.0"}}"#
        let data = Data(notification.utf8).base64EncodedString()
        return #"{"message":{"data":"\#(data)","messageId":"\#(messageId)","publishTime":"2026-03-01T00:00:00Z"},"subscription":"projects/p/subscriptions/play"}"#
    }
}

/// An RSA key standing in for Google's: its JWKS, and OIDC tokens it signs.
struct TestOIDCIssuer: Sendable {
    let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    let kid: String

    init(kid: String = "test-key-1") {
        self.kid = kid
    }
    static let audience = "https://ledger.example.com/notifications/google"
    static let email = "pubsub-push@example.iam.gserviceaccount.com"

    /// `{"keys":[…]}` with this key's public part.
    var jwks: String { Self.jwks([self]) }

    /// One JWKS document holding the public keys of `issuers`, as Google publishes two at a time.
    static func jwks(_ issuers: [TestOIDCIssuer]) -> String {
        #"{"keys":["# + issuers.map(\.jwk).joined(separator: ",") + "]}"
    }

    private var jwk: String {
        let primitives = try! key.publicKey.getKeyPrimitives()
        return #"{"kty":"RSA","alg":"RS256","use":"sig","kid":"\#(kid)","n":"\#(b64(primitives.modulus))","e":"\#(b64(primitives.publicExponent))"}"#
    }

    /// The verifier the server is configured with.
    var verifier: GoogleOIDCVerifier {
        GoogleOIDCVerifier(keys: try! JWKS(json: Array(jwks.utf8)), audience: Self.audience, email: Self.email)
    }

    /// A token as Pub/Sub sends it, with claims changed as the test asks.
    func token(audience: String = audience, issuer: String = "https://accounts.google.com",
               expiresIn: TimeInterval = 3600, email: String = email, alg: String = "RS256", kid: String? = nil) -> String {
        let now = Int(Date().timeIntervalSince1970)
        let header = #"{"alg":"\#(alg)","kid":"\#(kid ?? self.kid)","typ":"JWT"}"#
        let claims = #"{"aud":"\#(audience)","azp":"1234","email":"\#(email)","email_verified":true,"exp":\#(now + Int(expiresIn)),"iat":\#(now - 10),"iss":"\#(issuer)","sub":"1234"}"#
        let input = b64(Data(header.utf8)) + "." + b64(Data(claims.utf8))
        let signature = try! key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + b64(signature.rawRepresentation)
    }

    private func b64(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
