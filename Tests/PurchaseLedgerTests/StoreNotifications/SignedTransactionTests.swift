import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// docs/contract.md §6.4: an App Store purchase or renewal line may carry the app's StoreKit 2
/// `signedTransaction`; it is verified as a notification's transaction is and must agree with
/// the line, else `SIGNATURE_INVALID` naming the check and nothing written.
@Suite("Signed transactions on App Store lines")
struct SignedTransactionTests {
    typealias M = AppleMint
    let mint = AppleMint()

    static let transaction = M.transaction("700", original: "700", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z")

    /// A subscription line agreeing with `transaction`, carrying `signed`.
    static func line(signed: String?, product: String = "premium_month", expiry: String = "2026-04-01T00:00:00Z") -> String {
        var fields: [String: String?] = [
            "productId": "\"\(product)\"", "productType": "\"AUTO_RENEWABLE\"", "price": "\"9.99\"", "paymentSeq": "\"P-700\"",
            "transactionId": "\"700\"", "purchaseTime": "\"2026-03-01T00:00:00Z\"", "expiryTime": "\"\(expiry)\"",
        ]
        if let signed { fields["signedTransaction"] = "\"\(signed)\"" }
        return Fixture.purchaseLine(fields)
    }

    func ingest(_ lines: [String], stores: StoreConfiguration? = nil) async throws -> ([CommandOutcome], Int) {
        try await TestDatabase.with { db in
            try db.withConnection { c in
                let outcomes = try c.ingest(lines, stores: stores ?? mint.stores)
                return (outcomes, try c.count("SELECT count(*) FROM ledger.events"))
            }
        }
    }

    @Test func aLineWithItsSignedTransactionIsRecorded() async throws {
        let (outcomes, events) = try await ingest([Self.line(signed: mint.chain.sign(Self.transaction))])
        #expect(outcomes.map(\.status) == [.recorded])
        #expect(events == 1)
    }

    @Test(arguments: [
        ("productId", Self.line(signed: nil, product: "gem_100")),
        ("expiresDate", Self.line(signed: nil, expiry: "2026-05-01T00:00:00Z")),
    ])
    func aSignedTransactionThatDisagreesWithTheLineIsRefusedNamingTheField(field: String, template: String) async throws {
        // The same line with the genuine signed transaction, one of its fields changed.
        let signed = mint.chain.sign(Self.transaction)
        let line = template.replacingOccurrences(of: "}", with: ",\"signedTransaction\":\"\(signed)\"}")
        let (outcomes, events) = try await ingest([line])
        #expect(outcomes.first?.error?.code == .signatureInvalid)
        #expect(outcomes.first?.error?.message.hasPrefix("signedTransaction.\(field): ") == true, "\(outcomes)")
        #expect(events == 0)
    }

    @Test func aForgedSignedTransactionIsRefused() async throws {
        let rogue = TestAppleChain(.rogueRoot)
        let (outcomes, events) = try await ingest([Self.line(signed: rogue.sign(Self.transaction))])
        #expect(outcomes.first?.error?.code == .signatureInvalid)
        #expect(events == 0)
        let garbage = try await ingest([Self.line(signed: "not.a.jws")])
        #expect(garbage.0.first?.error?.code == .signatureInvalid)
    }

    @Test func anotherAppsTransactionIsRefusedNamingTheBundle() async throws {
        let other = M.transaction("700", original: "700", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z",
                                  bundle: "com.example.other")
        let (outcomes, _) = try await ingest([Self.line(signed: mint.chain.sign(other))])
        #expect(outcomes.first?.error?.code == .signatureInvalid)
        #expect(outcomes.first?.error?.message.hasPrefix("signedTransaction.bundleId: ") == true)
    }

    @Test func whenRequiredALineWithoutOneIsRefusedAndGoogleLinesAreNotConcerned() async throws {
        var stores = mint.stores
        stores.requiresSignedTransactions = true
        let google = Fixture.purchaseLine(["storeCode": "\"GG\"", "paymentSeq": "\"P-G\"", "transactionId": "\"GPA.1\""])
        let (outcomes, events) = try await ingest([Self.line(signed: nil), google], stores: stores)
        #expect(outcomes.map(\.status) == [.rejected, .recorded])
        #expect(outcomes.first?.error?.code == .signatureInvalid)
        #expect(outcomes.first?.error?.message.contains("LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS") == true)
        #expect(events == 1)
        #expect(try StoreConfiguration.fromEnvironment(["LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS": "on"]).requiresSignedTransactions)
        #expect(throws: LedgerError.self) { try StoreConfiguration.fromEnvironment(["LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS": "yes"]) }
    }
}
