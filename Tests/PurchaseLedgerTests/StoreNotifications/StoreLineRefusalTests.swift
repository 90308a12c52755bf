import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The §6.3 lines that teach the ledger for the Play Developer API's answers: a `product` line's
/// price and a Google `accountLink`; each refusal names the field and writes nothing.
@Suite("Product prices and Google account links")
struct StoreLineRefusalTests {
    static func product(_ extra: String) -> String {
        #"{"type":"product","storeCode":"GG","productId":"gem_100","productType":"CONSUMABLE"\#(extra)}"#
    }

    @Test(arguments: [
        (#","price":"0.99""#, "currency"),
        (#","currency":"USD""#, "price"),
        (#","price":"-1","currency":"USD""#, "price"),
        (#","price":"0.99","currency":"usd""#, "currency"),
    ])
    func aProductPriceWithoutItsCurrencyOrOutOfRuleIsRefusedNamingTheField(extra: String, field: String) async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = try c.ingest([Self.product(extra)])
                #expect(outcomes.first?.error?.code == .invalidInput)
                #expect(outcomes.first?.error?.message.hasPrefix("\(field): ") == true, "\(outcomes)")
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 0)
            }
        }
    }

    @Test func theSameDeclarationIsADuplicateAndANewPriceIsRecorded() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let lines = [Self.product(#","price":"0.99","currency":"USD""#), Self.product(#","price":"0.990","currency":"USD""#),
                             Self.product(#","price":"1.99","currency":"USD""#)]
                #expect(try c.ingest(lines).map(\.status) == [.recorded, .duplicate, .recorded])
                #expect(try c.count("SELECT count(*) FROM ledger.products WHERE price = 1.99 AND currency = 'USD'") == 1)
            }
        }
    }

    @Test func aGoogleAccountLinkedToAnotherUserIsRefusedAndWritesNothing() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let link = { (user: String) in #"{"type":"accountLink","userId":"\#(user)","storeCode":"GG","obfuscatedAccountId":"acct-1"}"# }
                let outcomes = try c.ingest([link("u1"), link("u1"), link("u2")])
                #expect(outcomes.map(\.status) == [.recorded, .duplicate, .rejected])
                #expect(outcomes.last?.error?.code == .userInvalid)
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 1)
            }
        }
    }
}
