import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Every refusal of docs/contract.md §5.2, end to end through `ingest`, with nothing written.
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

    /// Each refused line, its code and a word its message must hold; `good` is the trusted chain.
    static func cases(_ good: AppleMint) -> [(String, String, LedgerError.Code, String, StoreConfiguration)] {
        let signed = good.chain.signNested(payload())
        let parts = signed.split(separator: ".").map(String.init)
        let otherPayload = TestAppleChain.base64URL(Array(payload(bundle: "com.example.gam3").utf8))
        let rogue = AppleMint(.rogueRoot), nooid = AppleMint(.noLeafOID), noIntermediate = AppleMint(.noIntermediateOID)
        let expired = AppleMint(.validity(from: TestAppleChain.notBefore, to: Fixture.time("2026-01-01T00:00:00Z")))
        let notYet = AppleMint(.validity(from: Fixture.time("2026-06-01T00:00:00Z"), to: TestAppleChain.notAfter, of: .intermediate))
        let wrap = { (jws: String) in #"{"type":"appleNotification","signedPayload":"\#(jws)"}"# }
        let otherKey = TestAppleChain()
        return [
            ("forged payload", wrap(parts[0] + "." + otherPayload + "." + parts[2]), .signatureInvalid, "signature", good.stores),
            ("another key's signature", wrap(parts[0] + "." + parts[1] + "." + otherKey.signature(of: parts[0] + "." + parts[1])), .signatureInvalid, "signature", good.stores),
            ("chain to another root", rogue.line(payload()), .signatureInvalid, "root", good.stores),
            // These chains lead to their own root, which is trusted here: only their flaw refuses them.
            ("leaf without Apple's OID", nooid.line(payload()), .signatureInvalid, "1.2.840.113635.100.6.11.1", nooid.stores),
            ("intermediate without Apple's OID", noIntermediate.line(payload()), .signatureInvalid, "1.2.840.113635.100.6.2.1", noIntermediate.stores),
            ("leaf expired before signedDate", expired.line(payload()), .signatureInvalid, "signedDate", expired.stores),
            ("intermediate not yet valid", notYet.line(payload()), .signatureInvalid, "signedDate", notYet.stores),
            ("alg none", wrap(good.chain.sign(payload(), header: good.chain.header(alg: "none"))), .signatureInvalid, "alg", good.stores),
            ("HS256", wrap(good.chain.sign(payload(), header: good.chain.header(alg: "HS256"))), .signatureInvalid, "alg", good.stores),
            ("nested transaction of another chain", line(outer: good.chain, nestedTransactionJWS: rogue.chain.sign(transaction)), .signatureInvalid, "signedTransactionInfo", good.stores),
            ("renewal info of another lineage",
             good.line(M.payload("DID_RENEW", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: transaction,
                                 renewal: M.renewal(original: "999", signed: "2026-03-01T00:00:00Z"))), .signatureInvalid, "disagree", good.stores),
            ("another bundle", good.line(payload(bundle: "com.other.app")), .appMismatch, "bundleId", good.stores),
            ("another environment", good.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z",
                                                        transaction: transaction, environment: "Xcode")), .appMismatch, "environment", good.stores),
            ("nested transaction of another app",
             good.line(payload(transaction: M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z",
                                                          expires: "2026-04-01T00:00:00Z", bundle: "com.other.app"))), .appMismatch, "bundleId", good.stores),
            ("two parts", wrap(parts[0] + "." + parts[1]), .invalidInput, "signedPayload", good.stores),
            ("payload not JSON", wrap(parts[0] + "." + TestAppleChain.base64URL(Array("nope".utf8)) + "." + parts[2]), .invalidInput, "signedPayload", good.stores),
            ("signedPayload not a string", #"{"type":"appleNotification","signedPayload":7}"#, .invalidInput, "signedPayload", good.stores),
        ]
    }

    @Test func everyRefusalNamesItsCheckAndWritesNothing() async throws {
        let good = AppleMint()
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.ingest([AppleNotificationTests.link], stores: good.stores)
                for (name, line, code, mention, stores) in Self.cases(good) {
                    let before = try LedgerSnapshot(c)
                    let outcome = try #require(try c.ingest([line], stores: stores).first)
                    #expect(outcome.error?.code == code, "\(name): \(outcome)")
                    #expect(outcome.error?.message.contains(mention) == true, "\(name): \(outcome.error?.message ?? "") lacks \(mention)")
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
