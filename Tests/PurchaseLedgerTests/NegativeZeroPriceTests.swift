import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// `-0` equals 0: a price of `"-0"` or `-0` is not negative.
@Suite("A price of -0 is zero")
struct NegativeZeroPriceTests {
    @Test func negativeZeroIsAPriceEqualToZeroAndAnythingBelowStaysRefused() {
        // (Through a String: `Price("-0")` with a literal is `ExpressibleByStringLiteral`.)
        let parse = { (text: String) in Price(text) }
        #expect(parse("-0") == parse("0") && parse("-0")?.text == "0")
        #expect(parse("-0.00")?.text == "0.00" && parse("-0e5")?.text == "0")
        for refused in ["-0.01", "-1", "-", "--0", "-.0", "- 0", "-0x"] {
            #expect(parse(refused) == nil, "\(refused)")
        }
    }

    @Test func negativeZeroAsAStringOrANumberIsRecordedAsZero() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let results = try c.ingest([
                    Fixture.purchaseLine(["paymentSeq": "\"P-1\"", "transactionId": "\"T-1\"", "price": "\"-0\""]),
                    Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "transactionId": "\"T-2\"", "price": "-0"]),
                    Fixture.purchaseLine(["paymentSeq": "\"P-3\"", "transactionId": "\"T-3\"", "price": "\"-0.00\""]),
                    // The same payment with 0: the same content.
                    Fixture.purchaseLine(["paymentSeq": "\"P-1\"", "transactionId": "\"T-1\"", "price": "0"]),
                ])
                #expect(results.map(\.status) == [.recorded, .recorded, .recorded, .duplicate], "\(results.compactMap(\.error))")
                // Through the library's own types too.
                let price = try #require(Price(String("-0")))
                #expect(try c.run(.record(Fixture.consumable("P-4", price: price), kind: .purchase)).status == .recorded)

                #expect(try UnconsumedPayment.fetchAll(c, userId: "u1").map(\.price.text) == ["0", "0", "0.00", "0"])
                // The event, and so the SQL rules, see the sign already dropped.
                let stored = try c.query("SELECT data->>'price' AS p FROM ledger.events WHERE data ? 'price' ORDER BY position")
                    .map { try $0.decode("p", as: String.self) }
                #expect(stored == ["0", "0", "0.00", "0"])
            }
        }
    }
}
