import SwiftASN1
import X509

/// Builds the certificate chain of an Apple JWS synchronously: from the leaf `x5c[0]`, through
/// the untrusted intermediate `x5c[1]`, to one of the trusted roots. The root `x5c[2]` takes
/// no part.
///
/// This is swift-certificates' `Verifier.validate(leaf:intermediates:)` search with the
/// `RFC5280Policy` (validity not checked: the verifier checks it at `signedDate` afterwards),
/// redone without `async` for a store of one intermediate. `Verifier` is async only because
/// certificate stores and policies may be; here the roots are in memory and the policy needs no
/// I/O, so nothing is lost. The same candidates are tried, roots before intermediates, and a chain
/// of the same length comes out (when several trusted roots could end it, `Verifier` may prefer
/// another by key identifier), including the shorter ones `Verifier` would return (the leaf itself trusted, or issued by a
/// trusted root directly), which ``AppleSignedDataVerifier`` then refuses as not of length 3.
/// Tests run every case through both this and `Verifier`
/// (``AppleSignedDataVerifier/verifyUsingX509Verifier(_:field:)``) and expect the same outcome.
///
/// One difference, on the side of refusing: `RFC5280Policy` evaluates name constraints; this
/// refuses a chain in which a CA carries any (Apple's carry none).
enum AppleChainBuilder {
    /// The critical extensions a certificate in the chain may carry: those `RFC5280Policy`
    /// declares it handles, less name constraints (see above).
    static let understoodCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.basicConstraints,
        .X509ExtensionID.keyUsage,
    ]

    /// The chain from `leaf` to a trusted root (leaf first), or `nil` when there is none.
    static func chain(leaf: Certificate, intermediate: Certificate, roots: [Certificate]) -> [Certificate]? {
        if hasUnderstoodCriticalExtensionsOnly(leaf) == false { return nil }
        if roots.contains(leaf), meetsRFC5280([leaf]) { return [leaf] }
        // Depth-first, as Verifier: partial chains (leaf first, tip last) still to extend.
        var partials: [[Certificate]] = [[leaf]]
        while let partial = partials.popLast() {
            let tip = partial[partial.count - 1]
            for root in roots where root.subject == tip.issuer && canExtend(partial, with: root) {
                let candidate = partial + [root]
                if meetsRFC5280(candidate) { return candidate }
            }
            if intermediate.subject == tip.issuer, canExtend(partial, with: intermediate) {
                partials.append(partial + [intermediate])
            }
        }
        return nil
    }

    /// Whether `issuer` may follow `partial`'s tip: no critical extension it does not
    /// understand, not already in the chain (RFC 4158 §5.2 loop detection, by subject, key and
    /// subject alternative names), and its key verifies the tip's signature.
    private static func canExtend(_ partial: [Certificate], with issuer: Certificate) -> Bool {
        guard hasUnderstoodCriticalExtensionsOnly(issuer) else { return false }
        let alreadyIn = partial.contains { certificate in
            certificate.subject == issuer.subject && certificate.publicKey == issuer.publicKey
                && subjectAlternativeNames(certificate) == subjectAlternativeNames(issuer)
        }
        guard !alreadyIn else { return false }
        let tip = partial[partial.count - 1]
        return issuer.publicKey.isValidSignature(tip.signature, for: tip)
    }

    private static func hasUnderstoodCriticalExtensionsOnly(_ certificate: Certificate) -> Bool {
        certificate.extensions.allSatisfy { !$0.critical || understoodCriticalExtensions.contains($0.oid) }
    }

    private static func subjectAlternativeNames(_ certificate: Certificate) -> ArraySlice<UInt8>? {
        certificate.extensions[oid: .X509ExtensionID.subjectAlternativeName]?.value
    }

    /// RFC5280Policy without expiry: version 1 certificates carry no extensions; every
    /// certificate after the leaf is a CA whose path length allows the CAs below it (RFC 5280
    /// §4.2.1.9); a lone trusted certificate is a CA; no CA carries name constraints.
    static func meetsRFC5280(_ chain: [Certificate]) -> Bool {
        for certificate in chain where certificate.version == .v1 && !certificate.extensions.isEmpty {
            return false
        }
        if chain.count == 1 {
            guard chain[0].version != .v1 else { return true }
            return isCertificateAuthority(chain[0]) ?? false
        }
        var subCACount = 0
        for certificate in chain.dropFirst() {
            if certificate.extensions[oid: .X509ExtensionID.nameConstraints] != nil { return false }
            if certificate.version != .v1 {
                guard let constraints = try? certificate.extensions.basicConstraints,
                      case .isCertificateAuthority(let maxPathLength) = constraints
                else { return false }
                if let maxPathLength, maxPathLength < subCACount { return false }
            }
            if certificate.issuer != certificate.subject { subCACount += 1 }
        }
        return true
    }

    private static func isCertificateAuthority(_ certificate: Certificate) -> Bool? {
        guard let constraints = try? certificate.extensions.basicConstraints else { return nil }
        if case .isCertificateAuthority = constraints { return true }
        return false
    }
}
