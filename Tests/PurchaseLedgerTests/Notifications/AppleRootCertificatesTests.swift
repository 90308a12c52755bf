import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Apple root certificates")
struct AppleRootCertificatesTests {
    static let contractFingerprint =
        "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79"

    @Test func theBuiltInRootHasTheContractsFingerprint() {
        #expect(AppleRootCertificates.appleRootCAG3.fingerprints == [Self.contractFingerprint])
    }

    @Test func theBuiltInRootIsTheSharedFixturesCertificate() throws {
        let path = AppleJWSCheck.sharedDirectory.appendingPathComponent("fixtures/apple/AppleRootCA-G3.pem").path
        let fixture = try AppleRootCertificates(pemFiles: [path])
        #expect(fixture.derEncoded.count == 1)
        #expect(fixture.derEncoded == AppleRootCertificates.appleRootCAG3.derEncoded)
        #expect(Array(try #require(Data(base64Encoded: ApplePublicCertificates.rootG3))) == fixture.derEncoded[0])
    }

    @Test(arguments: [nil, "", ":", "::"])
    func unsetOrEmptyEnvironmentGivesTheBuiltInRoot(value: String?) throws {
        #expect(try AppleRootCertificates.fromEnvironment(value).fingerprints == [Self.contractFingerprint])
    }

    @Test func theEnvironmentNamesColonSeparatedFilesEachOfWhichMayHoldSeveral() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (a, b, c) = (TestAppleChain(), TestAppleChain(), TestAppleChain())
        let first = directory.appendingPathComponent("first.pem"), second = directory.appendingPathComponent("second.pem")
        try ("# test root A\n" + a.rootPEM + "\n").write(to: first, atomically: true, encoding: .utf8)
        try (b.rootPEM + "\n" + c.rootPEM + "\n").write(to: second, atomically: true, encoding: .utf8)

        let roots = try AppleRootCertificates.fromEnvironment("\(first.path):\(second.path)")
        #expect(roots.fingerprints.count == 3)
        #expect(Set(roots.fingerprints).count == 3)
        #expect(roots.fingerprints.allSatisfy { $0.count == 95 && $0 == $0.uppercased() })
        for chain in [a, b, c] {
            guard case .verified = await AppleJWSCheck.outcome(chain.sign(AppleJWSCheck.payload()), roots: roots) else {
                Issue.record("a chain to one of the configured roots was refused")
                continue
            }
        }
        await AppleJWSCheck.expectRefused(TestAppleChain().sign(AppleJWSCheck.payload()), roots: roots, .signatureInvalid,
                                          "does not lead to a trusted root")
        // Only the configured files: Apple's root is not added to them.
        #expect(!roots.fingerprints.contains(Self.contractFingerprint))
    }

    @Test func badFilesAreInvalidInputNamingTheFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(String, String, String)] = [
            ("empty.pem", "", "holds no PEM certificate"),
            ("text.pem", "hello\n", "holds no PEM certificate"),
            ("key.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "PEM block 1 is a PRIVATE KEY, not a CERTIFICATE"),
            ("junk.pem", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n", "PEM block 1 is not a DER X.509 certificate"),
            ("badbase64.pem", "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", "not valid PEM"),
        ]
        for (name, text, words) in cases {
            let file = directory.appendingPathComponent(name)
            try text.write(to: file, atomically: true, encoding: .utf8)
            let error = #expect(throws: LedgerError.self) { try AppleRootCertificates.fromEnvironment(file.path) }
            #expect(error?.code == .invalidInput)
            #expect(error?.message.hasPrefix("LEDGER_APPLE_ROOT_CERTIFICATES: \(file.path): ") == true, "\(String(describing: error))")
            #expect(error?.message.contains(words) == true, "\(String(describing: error))")
        }
        let missing = directory.appendingPathComponent("missing.pem").path
        let error = #expect(throws: LedgerError.self) { try AppleRootCertificates(pemFiles: [missing]) }
        #expect(error?.message.hasPrefix("\(missing): cannot be read") == true, "\(String(describing: error))")
        #expect(throws: LedgerError.self) { try AppleRootCertificates(pemFiles: []) }
        #expect(throws: LedgerError.self) { try AppleRootCertificates(pem: "") }
    }
}
