import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Every refusal of CONTRACT.md §5.2, end to end through `ingest`, with nothing written.
@Suite("App Store notification refusals")
struct AppleNotificationRefusalTests {
    typealias M = AppleMint
    static let transaction = AppleNotificationTests.first
    static func payload(transaction: String = transaction, bundle: String = M.bundle, environment: String = "Production") -> String {
        M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: transaction,
                  bundle: bundle, environment: environment)
    }

    /// A payload whose nested transaction is the given JWS text, signed by `outer`.
    static func line(outer: TestAppleChain, nestedTransactionJWS jws: String) -> String {
        let body = #"{"notificationType":"SUBSCRIBED","notificationUUID":"n-1","signedDate":\#(M.ms("2026-03-01T00:00:00Z")),"data":{"bundleId":"\#(M.bundle)","environment":"Production","signedTransactionInfo":"\#(jws)"}}"#
        return #"{"type":"appleNotification","signedPayload":"\#(outer.sign(body))"}"#
    }

    static func cases() -> [(String, String, LedgerError.Code, String)] {
        let good = AppleMint()
        let signed = good.chain.signNested(payload())
        let parts = signed.split(separator: ".").map(String.init)
        let otherPayload = TestAppleChain.base64URL(Array(payload(bundle: "com.example.gam3").utf8))
        let rogue = AppleMint(.rogueRoot), nooid = AppleMint(.noLeafOID), noIntermediate = AppleMint(.noIntermediateOID)
        let expired = AppleMint(.validity(from: TestAppleChain.notBefore, to: Fixture.time("2026-01-01T00:00:00Z")))
        let notYet = AppleMint(.validity(from: Fixture.time("2026-06-01T00:00:00Z"), to: TestAppleChain.notAfter, of: .intermediate))
        let wrap = { (jws: String) in #"{"type":"appleNotification","signedPayload":"\#(jws)"}"# }
        let otherKey = TestAppleChain()
        return [
            ("forged payload", wrap(parts[0] + "." + otherPayload + "." + parts[2]), .signatureInvalid, "signature"),
            ("another key's signature", wrap(parts[0] + "." + parts[1] + "." + otherKey.signature(of: parts[0] + "." + parts[1])), .signatureInvalid, "signature"),
            ("chain to another root", wrapLine(rogue, good), .signatureInvalid, "root"),
            ("leaf without Apple's OID", wrapLine(nooid, good), .signatureInvalid, "1.2.840.113635.100.6.11.1"),
            ("intermediate without Apple's OID", wrapLine(noIntermediate, good), .signatureInvalid, "1.2.840.113635.100.6.2.1"),
            ("leaf expired before signedDate", wrapLine(expired, good), .signatureInvalid, "signedDate"),
            ("intermediate not yet valid", wrapLine(notYet, good), .signatureInvalid, "signedDate"),
            ("alg none", wrap(good.chain.sign(payload(), header: good.chain.header(alg: "none"))), .signatureInvalid, "alg"),
            ("HS256", wrap(good.chain.sign(payload(), header: good.chain.header(alg: "HS256"))), .signatureInvalid, "alg"),
            ("nested transaction of another chain", line(outer: good.chain, nestedTransactionJWS: rogue.chain.sign(transaction)), .signatureInvalid, "signedTransactionInfo"),
            ("renewal info of another lineage",
             good.line(M.payload("DID_RENEW", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: transaction,
                                 renewal: M.renewal(original: "999", signed: "2026-03-01T00:00:00Z"))), .signatureInvalid, "disagree"),
            ("another bundle", good.line(payload(bundle: "com.other.app")), .appMismatch, "bundleId"),
            ("another environment", good.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z",
                                                        transaction: transaction, environment: "Xcode")), .appMismatch, "environment"),
            ("nested transaction of another app",
             good.line(payload(transaction: M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z",
                                                          expires: "2026-04-01T00:00:00Z", bundle: "com.other.app"))), .appMismatch, "bundleId"),
            ("two parts", wrap(parts[0] + "." + parts[1]), .invalidInput, "signedPayload"),
            ("payload not JSON", wrap(parts[0] + "." + TestAppleChain.base64URL(Array("nope".utf8)) + "." + parts[2]), .invalidInput, "signedPayload"),
            ("signedPayload not a string", #"{"type":"appleNotification","signedPayload":7}"#, .invalidInput, "signedPayload"),
        ]
    }

    static func wrapLine(_ signer: AppleMint, _ _: AppleMint) -> String {
        signer.line(payload())
    }

    @Test func everyRefusalNamesItsCheckAndWritesNothing() async throws {
        let good = AppleMint()
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.ingest([AppleNotificationTests.link], stores: good.stores)
                for (name, line, code, mention) in Self.cases() {
                    let before = try LedgerSnapshot(c)
                    let outcome = try #require(try c.ingest([line], stores: good.stores).first)
                    #expect(outcome.error?.code == code, "\(name): \(outcome)")
                    #expect(outcome.error?.message.contains(mention) == true, "\(name): \(outcome.error?.message ?? "")")
                    #expect(try LedgerSnapshot(c) == before, "\(name) wrote something")
                }
                // The genuine notification still applies afterwards: nothing above took its id.
                #expect(try c.ingest([good.line(Self.payload())], stores: good.stores).first?.status == .recorded)
            }
        }
    }

    @Test func withoutConfigurationEveryAppleNotificationIsRefused() async throws {
        let good = AppleMint()
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                // The built-in root is Apple's: the test chain does not lead to it.
                #expect(try c.ingest([good.line(Self.payload())]).first?.error?.code == .signatureInvalid)
                var trusted = StoreConfiguration()
                trusted.appleRoots = good.chain.roots
                #expect(try c.ingest([good.line(Self.payload())], stores: trusted).first?.error?.code == .appMismatch)
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 0)
            }
        }
    }
}
