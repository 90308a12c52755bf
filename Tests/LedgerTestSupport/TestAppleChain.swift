import Crypto
import Foundation
import PurchaseLedger
import SwiftASN1
import X509
import LedgerJSON

/// A certificate chain shaped like Apple's, made at test time, that signs App Store Server
/// Notifications V2 for tests: a root, an intermediate carrying Apple's OID
/// 1.2.840.113635.100.6.2.1 and a leaf carrying 1.2.840.113635.100.6.11.1, all P-256 and valid
/// 2020-2045 (as `shared/tools/mint-store-notification` makes them). Variants break one thing.
///
/// ```swift
/// let chain = TestAppleChain()
/// let verifier = AppleSignedDataVerifier(roots: chain.roots)
/// let jws = chain.signNested(#"{"notificationType":"DID_RENEW","signedDate":1767225600000,"#
///     + #""data":{"signedTransactionInfo":{"$jws":{"transactionId":"T-1"}}}}"#)
/// ```
public struct TestAppleChain: Sendable {
    /// Which certificate a validity window applies to.
    public enum Position: Sendable, Hashable {
        case leaf, intermediate, root
    }

    /// What is wrong with the chain, if anything.
    public enum Variant: Sendable, Hashable {
        /// Everything as Apple's.
        case good
        /// The intermediate lacks 1.2.840.113635.100.6.2.1.
        case noIntermediateOID
        /// The leaf lacks 1.2.840.113635.100.6.11.1.
        case noLeafOID
        /// One certificate is valid only from `from` to `to` (the others 2020-2045).
        case validity(from: Date, to: Date, of: Position = .leaf)
        /// The leaf and the intermediate were issued under a rogue root, which `x5c[2]` carries;
        /// ``roots`` still holds the genuine root, which signed nothing here.
        case rogueRoot
    }

    /// 2020-01-01T00:00:00Z, when the certificates become valid.
    public static let notBefore = Date(timeIntervalSince1970: 1_577_836_800)
    /// 2045-01-01T00:00:00Z, when they stop being valid.
    public static let notAfter = Date(timeIntervalSince1970: 2_366_841_600)

    /// The variant this chain was made as.
    public let variant: Variant
    /// The root a verifier should trust, as PEM.
    public let rootPEM: String
    /// ``rootPEM`` as the verifier's trusted roots.
    public let roots: AppleRootCertificates
    /// The root a verifier should trust, as standard base64 DER (an `x5c` entry).
    public let rootBase64: String
    /// The header's `x5c`: leaf, intermediate and carried root, standard base64 DER.
    public let x5c: [String]
    /// The intermediate as PEM (to configure it as a root, for the chain-length check).
    public let intermediatePEM: String
    private let leafKey: P256.Signing.PrivateKey

    /// Makes fresh keys and certificates.
    public init(_ variant: Variant = .good) {
        self.variant = variant
        func window(_ position: Position) -> (Date, Date) {
            if case .validity(let from, let to, position) = variant { return (from, to) }
            return (Self.notBefore, Self.notAfter)
        }
        let rootKey = P256.Signing.PrivateKey()
        let root = Self.certificate("Ledger Test Root", key: rootKey.publicKey, issuer: "Ledger Test Root",
                                    issuerKey: rootKey, ca: true, oid: nil, window: window(.root))
        var (signingRoot, signingRootKey, signingRootName) = (root, rootKey, "Ledger Test Root")
        if variant == .rogueRoot {
            signingRootKey = P256.Signing.PrivateKey()
            signingRootName = "Rogue Root"
            signingRoot = Self.certificate(signingRootName, key: signingRootKey.publicKey, issuer: signingRootName,
                                           issuerKey: signingRootKey, ca: true, oid: nil, window: window(.root))
        }
        let intermediateKey = P256.Signing.PrivateKey()
        let intermediate = Self.certificate(
            "Ledger Test Intermediate", key: intermediateKey.publicKey, issuer: signingRootName,
            issuerKey: signingRootKey, ca: true, oid: variant == .noIntermediateOID ? nil : [1, 2, 840, 113_635, 100, 6, 2, 1],
            window: window(.intermediate))
        leafKey = P256.Signing.PrivateKey()
        let leaf = Self.certificate(
            "Ledger Test Leaf", key: leafKey.publicKey, issuer: "Ledger Test Intermediate",
            issuerKey: intermediateKey, ca: false, oid: variant == .noLeafOID ? nil : [1, 2, 840, 113_635, 100, 6, 11, 1],
            window: window(.leaf))
        rootPEM = try! root.serializeAsPEM().pemString
        intermediatePEM = try! intermediate.serializeAsPEM().pemString
        roots = try! AppleRootCertificates(pem: rootPEM)
        rootBase64 = Data(Self.der(root)).base64EncodedString()
        x5c = [leaf, intermediate, signingRoot].map { Data(Self.der($0)).base64EncodedString() }
    }

    /// A compact JWS of `payloadJSON` (used as given, byte for byte) with the header
    /// `{"alg":"ES256","x5c":[leaf,intermediate,root]}`, signed by the leaf.
    public func sign(_ payloadJSON: String) -> String {
        sign(payloadJSON, header: header())
    }

    /// A compact JWS of `payloadJSON` under any header text, signed by this chain's leaf key
    /// whatever the header says (for `alg: none`, `HS256`, odd `x5c` and the like).
    public func sign(_ payloadJSON: String, header headerJSON: String) -> String {
        let input = Self.base64URL(Array(headerJSON.utf8)) + "." + Self.base64URL(Array(payloadJSON.utf8))
        return input + "." + signature(of: input)
    }

    /// The base64url ES256 signature (raw r||s) of `signingInput` by this chain's leaf key.
    public func signature(of signingInput: String) -> String {
        let signature = try! leafKey.signature(for: Array(signingInput.utf8))
        return Self.base64URL(Array(signature.rawRepresentation))
    }

    /// The header text `{"alg":<alg>,"x5c":[...]}`, with this chain's `x5c` unless given.
    public func header(alg: String = "ES256", x5c entries: [String]? = nil) -> String {
        let list = (entries ?? x5c).map { JSONWriter.quoted($0) }.joined(separator: ",")
        return "{\"alg\":\(JSONWriter.quoted(alg)),\"x5c\":[\(list)]}"
    }

    /// Like the Python tool: replaces every object whose single key is `"$jws"` by the JWS of
    /// its content (itself signed nested first), then signs the whole.
    ///
    /// `{"notificationType":"DID_RENEW","data":{"signedTransactionInfo":{"$jws":{...}}}}`
    public func signNested(_ json: String) -> String {
        let value: JSONValue
        do {
            value = try JSONParser.parse(json)
        } catch {
            preconditionFailure("signNested: not JSON: \(error)")
        }
        guard case .object = value else { preconditionFailure("signNested: not a JSON object") }
        var writer = JSONWriter()
        writer.value(resolvingJWS(value))
        return sign(writer.string)
    }

    private func resolvingJWS(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object) where object.count == 1 && object.fields[0].key == "$jws":
            var writer = JSONWriter()
            writer.value(resolvingJWS(object.fields[0].value))
            return .string(sign(writer.string))
        case .object(let object):
            return .object(JSONObject(object.fields.map { (key: $0.key, value: resolvingJWS($0.value)) }))
        case .array(let elements):
            return .array(elements.map(resolvingJWS))
        default:
            return value
        }
    }

    /// `bytes` in base64url without padding, as compact JWS parts are written.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    private static func certificate(
        _ subject: String, key: P256.Signing.PublicKey, issuer: String, issuerKey: P256.Signing.PrivateKey,
        ca: Bool, oid: ASN1ObjectIdentifier?, window: (Date, Date)
    ) -> Certificate {
        var extensions: [Certificate.Extension] = [
            try! Certificate.Extension(
                ca ? BasicConstraints.isCertificateAuthority(maxPathLength: oid == nil ? nil : 0) : .notCertificateAuthority,
                critical: true),
            try! Certificate.Extension(
                ca ? KeyUsage(keyCertSign: true, cRLSign: true) : KeyUsage(digitalSignature: true), critical: true),
        ]
        if let oid {
            extensions.append(Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00]))
        }
        return try! Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key),
            notValidBefore: window.0, notValidAfter: window.1,
            issuer: try! DistinguishedName { CommonName(issuer) }, subject: try! DistinguishedName { CommonName(subject) },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: try! Certificate.Extensions(extensions),
            issuerPrivateKey: Certificate.PrivateKey(issuerKey))
    }

    private static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
