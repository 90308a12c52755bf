import Crypto
import Foundation
import SwiftASN1
import X509

/// Verifies the compact JWS Apple signs App Store Server Notifications V2 with, and the
/// transactions and renewal infos nested in them (docs/contract.md §5.2 steps 1 and 2).
///
/// ```swift
/// let verifier = AppleSignedDataVerifier(roots: .appleRootCAG3)
/// let notification = try verifier.verify(line.signedPayload, field: "signedPayload")
/// notification.payload["notificationType"]   // .string("DID_RENEW")
/// ```
///
/// Synchronous and free of I/O: the chain is built in memory by `AppleChainBuilder` (no OCSP,
/// as Apple's own library with online checks off). Safe to share between threads.
public struct AppleSignedDataVerifier: Sendable {
    /// Apple's marker on the intermediate (Apple Worldwide Developer Relations CA).
    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    /// Apple's marker on the leaf (App Store receipt signing).
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    /// The only roots a chain may lead to.
    public let roots: AppleRootCertificates

    /// A verifier that trusts `roots` and nothing else.
    public init(roots: AppleRootCertificates) {
        self.roots = roots
    }

    /// Verifies `compact` and returns its decoded header and payload. Checks, in order, refusing
    /// with the first failure:
    ///  - `LedgerError(.invalidInput, "<field>: ...")` when `compact` is not three base64url
    ///    parts or the header or payload is not a base64url-encoded JSON object, or the
    ///    payload's `signedDate` is not epoch milliseconds;
    ///  - `LedgerError(.signatureInvalid, "<field>...: <the failed check>")` when: the header's
    ///    `alg` is not `ES256` or it has `crit`; `x5c` is not an array of exactly three standard
    ///    base64 DER certificates; the leaf `x5c[0]` and the intermediate `x5c[1]` do not chain
    ///    to one of ``roots`` under RFC 5280 (`x5c[2]`, the root the JWS carries, is never
    ///    trusted); the verified chain is not of length 3; the intermediate lacks the extension
    ///    OID 1.2.840.113635.100.6.2.1 or the leaf lacks 1.2.840.113635.100.6.11.1; a key usage
    ///    does not allow its use (certificate signing for the CAs, digital signatures for the
    ///    leaf); a certificate is not valid at the payload's `signedDate` (now when it has none);
    ///    the ES256 signature (raw r||s, 64 bytes) over `<header>.<payload>` does not verify with
    ///    the leaf's P-256 key.
    ///
    /// `field` names the JSON field the JWS came from, e.g. `signedPayload` or
    /// `signedPayload.data.signedTransactionInfo`, and starts every message.
    public func verify(_ compact: String, field: String) throws -> VerifiedJWS {
        let jws = try CompactJWS(compact, field: field)
        let x5c = try jws.certificates()
        let chain = AppleChainBuilder.chain(leaf: x5c[0], intermediate: x5c[1], roots: roots.certificates)
        return try verified(jws, chain: chain)
    }

    /// The checks after the chain is built (or not), shared by both ways of building it.
    func verified(_ jws: CompactJWS, chain: [Certificate]?) throws -> VerifiedJWS {
        let field = jws.field
        func refuse(_ problem: String) -> LedgerError { LedgerError(.signatureInvalid, "\(field): \(problem)") }

        guard let chain else {
            throw refuse("the certificate chain does not lead to a trusted root (x5c[0] and x5c[1] must chain "
                + "to a configured root certificate; the root carried in x5c[2] is never trusted by itself)")
        }
        guard chain.count == 3 else {
            throw refuse("the verified chain has \(chain.count) certificate\(chain.count == 1 ? "" : "s"), "
                + "expected 3 (leaf, intermediate, trusted root)")
        }
        let (leaf, intermediate, root) = (chain[0], chain[1], chain[2])
        guard intermediate.extensions[oid: Self.intermediateOID] != nil else {
            throw refuse("the intermediate certificate lacks Apple's OID 1.2.840.113635.100.6.2.1")
        }
        guard leaf.extensions[oid: Self.leafOID] != nil else {
            throw refuse("the leaf certificate lacks Apple's OID 1.2.840.113635.100.6.11.1")
        }
        for (certificate, name) in [(intermediate, "intermediate"), (root, "root")] {
            guard Self.keyUsage(certificate, allows: \.keyCertSign) else {
                throw refuse("the \(name) certificate's key usage does not allow signing certificates")
            }
        }
        guard Self.keyUsage(leaf, allows: \.digitalSignature) else {
            throw refuse("the leaf certificate's key usage does not allow digital signatures")
        }

        let instant = jws.signedDate ?? Date()
        let when = jws.signedDate == nil
            ? "now, \(Timestamp(instant).iso8601Milliseconds) (the payload has no signedDate)"
            : "at signedDate \(Timestamp(instant).iso8601Milliseconds)"
        for (certificate, name) in [(leaf, "leaf"), (intermediate, "intermediate"), (root, "root")] {
            let from = certificate.notValidBefore, to = certificate.notValidAfter
            guard from <= to, from <= instant, instant <= to else {
                throw refuse("a certificate is not valid \(when): the \(name) certificate is valid from "
                    + "\(Timestamp(from).iso8601Milliseconds) to \(Timestamp(to).iso8601Milliseconds)")
            }
        }

        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw refuse("the leaf certificate's key is not a P-256 key, which ES256 needs")
        }
        guard jws.signature.count == 64 else {
            throw refuse("the signature is \(jws.signature.count) bytes; ES256 needs 64 (r||s)")
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
              key.isValidSignature(signature, for: jws.signingInput)
        else {
            throw refuse("the ES256 signature does not verify with the leaf certificate's key")
        }
        return VerifiedJWS(header: jws.header, payload: jws.payload, signedDate: jws.signedDate)
    }

    /// Whether `certificate`'s key usage, when it has one, allows `use` (RFC 5280 §4.2.1.3).
    private static func keyUsage(_ certificate: Certificate, allows use: KeyPath<KeyUsage, Bool>) -> Bool {
        guard let usage = try? certificate.extensions.keyUsage else {
            return certificate.extensions[oid: .X509ExtensionID.keyUsage] == nil
        }
        return usage[keyPath: use]
    }
}
