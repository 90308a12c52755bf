@_spi(DisableValidityCheck) import X509

extension AppleSignedDataVerifier {
    /// The same checks as ``verify(_:field:)``, in the same order and with the same messages,
    /// but with the chain built by swift-certificates' own `Verifier` (async): a
    /// `CertificateStore` of ``roots`` only, `x5c[1]` as the one untrusted intermediate, and
    /// `RFC5280Policy` with its validity check off (validity is checked at `signedDate` after, to
    /// name that failure).
    ///
    /// ``verify(_:field:)`` is the one to call; this one exists so that tests can hold the
    /// synchronous chain building to the library's for every case they try.
    public func verifyUsingX509Verifier(_ compact: String, field: String) async throws -> VerifiedJWS {
        let jws = try CompactJWS(compact, field: field)
        let x5c = try jws.certificates()
        var verifier = Verifier(rootCertificates: CertificateStore(roots.certificates)) {
            RFC5280Policy.withValidityCheckDisabled()
        }
        let chain: [Certificate]?
        switch await verifier.validate(leaf: x5c[0], intermediates: CertificateStore([x5c[1]])) {
        case .validCertificate(let validated):
            chain = Array(validated)
        case .couldNotValidate:
            chain = nil
        }
        return try verified(jws, chain: chain)
    }
}
