import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Apple signed data: SIGNATURE_INVALID names the check")
struct AppleJWSSignatureRefusalTests {
    let chain = TestAppleChain()
    let payload = AppleJWSCheck.payload()

    private func refused(_ jws: String, _ words: String, roots: AppleRootCertificates? = nil,
                         sourceLocation: SourceLocation = #_sourceLocation) async {
        await AppleJWSCheck.expectRefused(jws, roots: roots ?? chain.roots, .signatureInvalid, words,
                                          sourceLocation: sourceLocation)
    }

    // MARK: The signature

    @Test func aPayloadAlteredAfterSigningIsRefused() async {
        let parts = AppleJWSCheck.parts(chain.sign(payload))
        let altered = TestAppleChain.base64URL(Array(payload.replacingOccurrences(of: "TEST", with: "REFUND").utf8))
        await refused([parts[0], altered, parts[2]].joined(separator: "."),
                      "signedPayload: the ES256 signature does not verify with the leaf certificate's key")
    }

    @Test func aSignatureByAnotherKeyIsRefused() async {
        let parts = AppleJWSCheck.parts(chain.sign(payload))
        let other = TestAppleChain().signature(of: parts[0] + "." + parts[1])
        await refused([parts[0], parts[1], other].joined(separator: "."), "the ES256 signature does not verify")
    }

    @Test(arguments: [0, 1, 63, 65, 128])
    func aSignatureOfAnyLengthButSixtyFourBytesIsRefused(length: Int) async {
        let parts = AppleJWSCheck.parts(chain.sign(payload))
        let signature = TestAppleChain.base64URL(Array(repeating: 1, count: length))
        await refused([parts[0], parts[1], signature].joined(separator: "."),
                      "the signature is \(length) bytes; ES256 needs 64 (r||s)")
    }

    // MARK: The chain

    @Test func aChainToARogueRootIsRefused() async {
        let rogue = TestAppleChain(.rogueRoot)
        await refused(rogue.sign(payload), "signedPayload: the certificate chain does not lead to a trusted root",
                      roots: rogue.roots)
    }

    /// An attacker's complete chain, their own root carried in `x5c[2]`: never trusted by itself.
    @Test func anAttackersChainCarryingItsOwnRootIsRefused() async {
        let attacker = TestAppleChain()
        await refused(attacker.sign(payload), "the certificate chain does not lead to a trusted root")
    }

    /// A rogue leaf and intermediate with the genuine trusted root in `x5c[2]`: carrying the
    /// right root proves nothing.
    @Test func aRogueChainCarryingTheTrustedRootIsRefused() async {
        let rogue = TestAppleChain(.rogueRoot)
        let jws = rogue.sign(payload, header: rogue.header(x5c: [rogue.x5c[0], rogue.x5c[1], rogue.rootBase64]))
        await refused(jws, "the certificate chain does not lead to a trusted root", roots: rogue.roots)
    }

    /// `x5c[2]` swapped for the attacker's root after signing: the header is signed, so this breaks
    /// the signature (and `x5c[2]` is not what the chain is built to anyway).
    @Test func swappingTheCarriedRootAfterSigningIsRefused() async {
        let parts = AppleJWSCheck.parts(chain.sign(payload))
        let header = chain.header(x5c: [chain.x5c[0], chain.x5c[1], TestAppleChain().x5c[2]])
        await refused([TestAppleChain.base64URL(Array(header.utf8)), parts[1], parts[2]].joined(separator: "."),
                      "the ES256 signature does not verify")
    }

    @Test func anIntermediateFromAnotherChainIsRefused() async {
        let other = TestAppleChain()
        let jws = chain.sign(payload, header: chain.header(x5c: [chain.x5c[0], other.x5c[1], chain.x5c[2]]))
        await refused(jws, "the certificate chain does not lead to a trusted root")
    }

    /// Trusting the intermediate itself makes the verified chain leaf → intermediate: 2, not 3.
    @Test func aVerifiedChainShorterThanThreeIsRefused() async throws {
        let roots = try AppleRootCertificates(pem: chain.intermediatePEM)
        await refused(chain.sign(payload), "the verified chain has 2 certificates, expected 3", roots: roots)
    }

    @Test func anIntermediateWithoutApplesOIDIsRefused() async {
        let broken = TestAppleChain(.noIntermediateOID)
        await refused(broken.sign(payload), "signedPayload: the intermediate certificate lacks Apple's OID 1.2.840.113635.100.6.2.1",
                      roots: broken.roots)
    }

    @Test func aLeafWithoutApplesOIDIsRefused() async {
        let broken = TestAppleChain(.noLeafOID)
        await refused(broken.sign(payload), "signedPayload: the leaf certificate lacks Apple's OID 1.2.840.113635.100.6.11.1",
                      roots: broken.roots)
    }

    // MARK: Validity at signedDate

    @Test func aSignedDateBeforeTheCertificatesAreValidIsRefused() async {
        await refused(chain.sign(AppleJWSCheck.payload(signedDate: 1_546_300_800_000)),
                      "signedPayload: a certificate is not valid at signedDate 2019-01-01T00:00:00.000Z: the leaf certificate is valid from 2020-01-01T00:00:00.000Z to 2045-01-01T00:00:00.000Z")
    }

    @Test func aSignedDateAfterTheCertificatesExpireIsRefused() async {
        await refused(chain.sign(AppleJWSCheck.payload(signedDate: 2_398_377_600_000)),
                      "a certificate is not valid at signedDate 2046-01-01T00:00:00.000Z")
    }

    @Test(arguments: [TestAppleChain.Position.leaf, .intermediate, .root])
    func eachCertificateOfTheChainMustBeValidAtSignedDate(position: TestAppleChain.Position) async {
        let from = Date(timeIntervalSince1970: 1_577_836_800), to = Date(timeIntervalSince1970: 1_609_459_200)
        let expired = TestAppleChain(.validity(from: from, to: to, of: position))
        let name = "\(position)"
        await refused(expired.sign(payload), "not valid at signedDate 2026-01-01T00:00:00.000Z: the \(name) certificate is valid from 2020-01-01T00:00:00.000Z to 2021-01-01T00:00:00.000Z",
                      roots: expired.roots)
        // The same chain verifies at a signedDate inside its window.
        let inside = expired.sign(AppleJWSCheck.payload(signedDate: 1_590_000_000_000))
        guard case .verified = await AppleJWSCheck.outcome(inside, roots: expired.roots) else {
            Issue.record("refused inside the window")
            return
        }
    }

    @Test func withoutSignedDateAnExpiredChainIsRefusedNow() async {
        let expired = TestAppleChain(.validity(from: TestAppleChain.notBefore, to: Date(timeIntervalSince1970: 1_609_459_200)))
        await refused(expired.sign(#"{"notificationType":"TEST"}"#), "a certificate is not valid now, ", roots: expired.roots)
    }

    // MARK: The header

    @Test(arguments: [("none", "none is not ES256"), ("HS256", "HS256 is not ES256"), ("RS256", "RS256 is not ES256"),
                      ("ES384", "ES384 is not ES256"), ("es256", "es256 is not ES256"), ("", "an empty string is not ES256")])
    func anAlgOtherThanES256IsRefused(alg: String, words: String) async {
        await refused(chain.sign(payload, header: chain.header(alg: alg)), "signedPayload.header.alg: \(words)")
    }

    /// HS256 with the leaf's public key as the HMAC secret: the classic confusion attack.
    @Test func anHS256TokenKeyedWithTheCertificateIsRefused() async {
        let header = TestAppleChain.base64URL(Array(chain.header(alg: "HS256").utf8))
        let body = TestAppleChain.base64URL(Array(payload.utf8))
        await refused("\(header).\(body).\(TestAppleChain.base64URL(Array(repeating: 7, count: 32)))",
                      "signedPayload.header.alg: HS256 is not ES256")
    }

    @Test(arguments: [
        (#"{"x5c":[]}"#, "signedPayload.header.alg: missing"),
        (#"{"alg":256,"x5c":[]}"#, "signedPayload.header.alg: a number is not ES256"),
        (#"{"alg":"ES256"}"#, "signedPayload.header.x5c: missing"),
        (#"{"alg":"ES256","x5c":"MIIB"}"#, "signedPayload.header.x5c: a string, expected an array of 3 certificates"),
        (#"{"alg":"ES256","x5c":[1,2,3]}"#, "signedPayload.header.x5c[0]: a number, expected a base64 DER certificate"),
        (#"{"alg":"ES256","x5c":["aGVsbG8=","aGVsbG8=","aGVsbG8="]}"#, "signedPayload.header.x5c[0]: not a DER X.509 certificate"),
        (#"{"alg":"ES256","x5c":["aGVsbG8","aGVsbG8","aGVsbG8"]}"#, "signedPayload.header.x5c[0]: not standard base64"),
        (#"{"alg":"ES256","crit":["exp"],"x5c":[]}"#, "signedPayload.header.crit: critical header parameters are not supported"),
    ])
    func malformedHeadersAreRefusedNamingTheField(header: String, words: String) async {
        await refused(chain.sign(payload, header: header), words)
    }

    @Test(arguments: [0, 1, 2, 4])
    func anX5cOfAnyCountButThreeIsRefused(count: Int) async {
        let entries = (0..<count).map { chain.x5c[$0 % 3] }
        await refused(chain.sign(payload, header: chain.header(x5c: entries)),
                      "signedPayload.header.x5c: holds \(count) certificates, expected 3 (leaf, intermediate, root)")
    }

    @Test(arguments: [0, 1, 2])
    func anX5cEntryInBase64URLIsRefused(index: Int) async throws {
        var entries = chain.x5c
        let standard = entries[index]
        entries[index] = TestAppleChain.base64URL(Array(try #require(Data(base64Encoded: standard))))
        try #require(entries[index] != standard, "this certificate's base64 happens to be base64url too")
        await refused(chain.sign(payload, header: chain.header(x5c: entries)),
                      "signedPayload.header.x5c[\(index)]: not standard base64")
    }

    @Test(arguments: [0, 1, 2])
    func anX5cEntryThatIsNotDERIsRefused(index: Int) async throws {
        var entries = chain.x5c
        var der = Array(try #require(Data(base64Encoded: entries[index])))
        der.removeLast(3)
        entries[index] = Data(der).base64EncodedString()
        await refused(chain.sign(payload, header: chain.header(x5c: entries)),
                      "signedPayload.header.x5c[\(index)]: not a DER X.509 certificate")
    }

    /// The signature BIT STRING closes the certificate: `03 <length> 00 <ECDSA-Sig-Value>`.
    /// Declaring 1 unused bit where the last bit is zero leaves the same octets to verify, and
    /// swift-certificates accepts it; the verifier must not (the 4,000-case fuzz found this).
    @Test(arguments: [0, 1])
    func aCertificateWhoseSignatureBitStringDeclaresUnusedBitsIsRefused(index: Int) async throws {
        var found: (TestAppleChain, [UInt8], Int)?
        for _ in 0..<64 where found == nil {
            let candidate = TestAppleChain()
            let der = Array(try #require(Data(base64Encoded: candidate.x5c[index])))
            let start = try #require(Self.signatureBitString(der))
            if der[der.count - 1] & 1 == 0 { found = (candidate, der, start + 2) }
        }
        var (candidate, der, unusedBitsAt) = try #require(found)
        der[unusedBitsAt] = 1
        var x5c = candidate.x5c
        x5c[index] = Data(der).base64EncodedString()
        await AppleJWSCheck.expectRefused(candidate.sign(payload, header: candidate.header(x5c: x5c)), roots: candidate.roots,
                                          .signatureInvalid, "signedPayload.header.x5c[\(index)]: not a DER X.509 certificate (its signature BIT STRING declares unused bits)")
    }

    /// Where the certificate's closing signature BIT STRING (`03 <length> 00 30 ...`) starts.
    private static func signatureBitString(_ der: [UInt8]) -> Int? {
        var start = der.count - 4
        while start >= 0 {
            let closes = Int(der[start + 1]) == der.count - start - 2
            if der[start] == 0x03, der[start + 2] == 0x00, der[start + 3] == 0x30, closes { return start }
            start -= 1
        }
        return nil
    }

    @Test func theFieldNameStartsEveryMessage() async {
        await AppleJWSCheck.expectRefused(TestAppleChain().sign(payload), roots: chain.roots, .signatureInvalid,
                                          "signedPayload.data.signedRenewalInfo: the certificate chain",
                                          field: "signedPayload.data.signedRenewalInfo")
    }
}
