import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Apple signed data: what verifies")
struct AppleSignedDataVerifierTests {
    @Test func aNotificationMintedByTheTestChainVerifiesAndItsNestedTransactionToo() async throws {
        let chain = TestAppleChain()
        let jws = chain.signNested("""
            {"notificationType":"DID_RENEW","notificationUUID":"n-1","signedDate":\(AppleJWSCheck.signedDate),
             "data":{"bundleId":"com.example","environment":"Production",
                     "signedTransactionInfo":{"$jws":{"transactionId":"T-1","price":990,"signedDate":1767225500000}}}}
            """)
        let verifier = AppleSignedDataVerifier(roots: chain.roots)
        let notification = try verifier.verify(jws, field: "signedPayload")
        #expect(notification.payload["notificationType"] == .string("DID_RENEW"))
        #expect(notification.signedDate == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(notification.header["alg"] == .string("ES256"))
        let data = try #require(notification.payload["data"]?.objectValue)
        let nested = try #require(data["signedTransactionInfo"]?.stringValue)
        let transaction = try verifier.verify(nested, field: "signedPayload.data.signedTransactionInfo")
        #expect(transaction.payload["transactionId"] == .string("T-1"))
        #expect(transaction.payload["price"] == .number("990"))
        #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_767_225_500))
        #expect(await AppleJWSCheck.outcome(jws, roots: chain.roots) == .verified(notification.payload))
    }

    @Test func numbersAndRepeatedKeysOfThePayloadAreKeptExactly() throws {
        let chain = TestAppleChain()
        let jws = chain.sign(#"{"price":1.10,"big":123456789012345678901234567890,"k":1,"k":2}"#)
        let payload = try AppleSignedDataVerifier(roots: chain.roots).verify(jws, field: "signedPayload").payload
        #expect(payload["price"] == .number("1.10"))
        #expect(payload["big"] == .number("123456789012345678901234567890"))
        #expect(payload.fields.map(\.key) == ["price", "big", "k", "k"])
    }

    @Test func withoutSignedDateTheCertificatesAreCheckedNow() async throws {
        let chain = TestAppleChain()
        let result = await AppleJWSCheck.outcome(chain.sign(#"{"notificationType":"TEST"}"#), roots: chain.roots)
        #expect(result == .verified(["notificationType": .string("TEST")]))
    }

    /// The root a JWS carries is ignored, as in Apple's library: a leaf and an intermediate that
    /// chain to a trusted root verify whatever certificate `x5c[2]` holds (the leaf key signs the
    /// header, so only the leaf's owner can choose it).
    @Test func theRootCarriedInX5cTakesNoPartWhenTheLeafAndIntermediateChainToATrustedRoot() async throws {
        let chain = TestAppleChain()
        let attacker = TestAppleChain()
        let header = chain.header(x5c: [chain.x5c[0], chain.x5c[1], attacker.x5c[2]])
        let jws = chain.sign(AppleJWSCheck.payload(), header: header)
        guard case .verified = await AppleJWSCheck.outcome(jws, roots: chain.roots) else {
            Issue.record("a good chain with another x5c[2] was refused")
            return
        }
    }

    @Test func aChainToAnyOfSeveralTrustedRootsVerifies() async throws {
        let first = TestAppleChain(), second = TestAppleChain()
        let roots = try AppleRootCertificates(pem: first.rootPEM + "\n" + second.rootPEM)
        #expect(roots.fingerprints.count == 2)
        for chain in [first, second] {
            guard case .verified = await AppleJWSCheck.outcome(chain.sign(AppleJWSCheck.payload()), roots: roots) else {
                Issue.record("refused a chain to the second of two roots")
                continue
            }
        }
    }

    @Test func theSharedFixtureChainMintedByThePythonToolVerifiesAndItsBrokenChainsAreRefused() async throws {
        let fixtures = AppleJWSCheck.sharedDirectory.appendingPathComponent("fixtures/apple-test")
        let roots = try AppleRootCertificates(pemFiles: [fixtures.appendingPathComponent("root.pem").path])
        let payload = """
            {"notificationType":"SUBSCRIBED","signedDate":\(AppleJWSCheck.signedDate),
             "data":{"signedTransactionInfo":{"$jws":{"transactionId":"T-9","price":120000}}}}
            """
        let good = try mint(payload, chain: "good")
        guard case .verified(let notification) = await AppleJWSCheck.outcome(good, roots: roots) else {
            Issue.record("the Python-minted notification was refused: \(await AppleJWSCheck.outcome(good, roots: roots))")
            return
        }
        let nested = try #require(notification["data"]?.objectValue?["signedTransactionInfo"]?.stringValue)
        let transaction = try AppleSignedDataVerifier(roots: roots).verify(nested, field: "signedPayload.data.signedTransactionInfo")
        #expect(transaction.payload["price"] == .number("120000"))

        await AppleJWSCheck.expectRefused(try mint(payload, chain: "rogue"), roots: roots, .signatureInvalid,
                                          "the certificate chain does not lead to a trusted root")
        await AppleJWSCheck.expectRefused(try mint(payload, chain: "nooid"), roots: roots, .signatureInvalid,
                                          "the leaf certificate lacks Apple's OID 1.2.840.113635.100.6.11.1")
    }

    /// Apple's own public production chain (WWDR G6 intermediate and a receipt-signing leaf
    /// valid 2025-09-19 to 2027-10-13, both checked with `openssl verify` against the built-in
    /// root) passes every certificate check of the built-in roots; without Apple's key, only the
    /// signature fails. This holds the key-usage and RFC 5280 checks to what Apple really sends.
    @Test func applesProductionChainPassesEveryCertificateCheckAndOnlyTheSignatureFails() async throws {
        let header = #"{"alg":"ES256","x5c":["\#(ApplePublicCertificates.prodLeaf)","\#(ApplePublicCertificates.wwdrG6)","\#(ApplePublicCertificates.rootG3)"]}"#
        let unsigned = TestAppleChain.base64URL(Array(header.utf8)) + "."
            + TestAppleChain.base64URL(Array(AppleJWSCheck.payload().utf8))
        let forged = unsigned + "." + TestAppleChain().signature(of: unsigned)
        await AppleJWSCheck.expectRefused(forged, roots: .appleRootCAG3, .signatureInvalid,
                                          "the ES256 signature does not verify with the leaf certificate's key")
        let afterTheLeaf = unsigned.split(separator: ".")[0] + "."
            + TestAppleChain.base64URL(Array(AppleJWSCheck.payload(signedDate: 1_830_297_600_000).utf8))
        await AppleJWSCheck.expectRefused(afterTheLeaf + ".AAAA", roots: .appleRootCAG3, .signatureInvalid,
                                          "a certificate is not valid at signedDate 2028-01-01T00:00:00.000Z: the leaf")
    }

    /// Runs `shared/tools/mint-store-notification apple --chain <chain>` on `payload`.
    private func mint(_ payload: String, chain: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", AppleJWSCheck.sharedDirectory.appendingPathComponent("tools/mint-store-notification").path,
                             "apple", "--chain", chain]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, output, errors)
        try process.run()
        input.fileHandleForWriting.write(Data(payload.utf8))
        try input.fileHandleForWriting.close()
        let jws = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "mint-store-notification failed: \(stderr)")
        return jws.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
