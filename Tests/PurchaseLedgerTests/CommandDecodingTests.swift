import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Decoding contract lines")
struct CommandDecodingTests {
    private func decode(_ line: String) throws(LedgerError) -> LedgerCommand {
        try LedgerCommand(line: Array(line.utf8))
    }

    private func refusal(_ line: String) -> LedgerError? {
        do {
            _ = try decode(line)
            return nil
        } catch {
            return error
        }
    }

    @Test func canonicalPurchaseDecodesEveryField() throws {
        let line = Fixture.purchaseLine([
            "payload": "\"character-7\"", "sandboxPayment": "true", "promotionPayment": "true", "productSeq": "77",
        ])
        guard case .record(let p, let kind) = try decode(line) else { Issue.record("not a record"); return }
        #expect(kind == .purchase)
        #expect(p.userId == "u1" && p.storeCode == .appStore && p.productId == "gem_100")
        #expect(p.productType == .consumable && p.price.text == "0.99" && p.currency == "USD")
        #expect(p.paymentSeq == "P-1" && p.purchaseToken == "tok-1" && p.transactionId == "T-1")
        #expect(p.purchaseTime == Fixture.time("2026-01-01T00:00:00Z"))
        #expect(p.payload == "character-7" && p.sandboxPayment && p.promotionPayment && p.productSeq == 77)
    }

    @Test func sdkFieldNamesAreAccepted() throws {
        let line = """
            {"type":"renewal","userID":"u9","storeCode":"GG","gamebaseProductId":"vip","productType":2,
             "price":4.99,"currency":"KRW","paymentSeq":"S-1","accessToken":"secret","paymentId":"GPA.1",
             "originalPaymentId":"GPA.0","purchaseTime":1767225600000,"expiryTime":1769904000000,
             "storePayment":true,"itemSeq":5}
            """
        guard case .record(let p, let kind) = try decode(line) else { Issue.record("not a record"); return }
        #expect(kind == .renewal)
        #expect(p.userId == "u9" && p.productId == "vip" && p.productType == .autoRenewable)
        #expect(p.price.text == "4.99" && p.purchaseToken == "secret" && p.transactionId == "GPA.1")
        #expect(p.originalTransactionId == "GPA.0" && p.promotionPayment && p.productSeq == 5)
        #expect(p.purchaseTime == Fixture.time("2026-01-01T00:00:00Z"))
        let toast = """
            {"type":"purchase","userId":"u1","storeCode":"AS","productIdentifier":"coins","productType":"3",
             "price":"1","currency":"USD","paymentSeq":"C-1","purchaseToken":"t","transactionIdentifier":"A-2",
             "originalTransactionIdentifier":"A-1","purchaseTime":"2026-01-01T09:00:00+09:00","expiryTime":"2026-02-01T00:00:00Z"}
            """
        guard case .record(let q, _) = try decode(toast) else { Issue.record("not a record"); return }
        #expect(q.productId == "coins" && q.productType == .consumableAutoRenewable)
        #expect(q.transactionId == "A-2" && q.originalTransactionId == "A-1")
        #expect(q.purchaseTime == Fixture.time("2026-01-01T00:00:00Z"))
    }

    @Test(arguments: [("\"1.10\"", "1.10"), ("1.10", "1.10"), ("0", "0"), ("\"12345678901234567890.123456789\"", "12345678901234567890.123456789"), ("1.5e2", "150"), ("25E-3", "0.025"),
                      // Negative zero equals zero: read as zero, its scale kept.
                      ("\"-0\"", "0"), ("-0", "0"), ("\"-0.00\"", "0.00"), ("-0.0", "0.0"), ("-0e3", "0")])
    func pricesKeepTheirDigitsAndScale(literal: String, expected: String) throws {
        guard case .record(let p, _) = try decode(Fixture.purchaseLine(["price": literal])) else { return }
        #expect(p.price.text == expected)
    }

    @Test func payloadKeepsEveryCharacterIncludingNUL() throws {
        let line = Fixture.purchaseLine(["payload": "\"a\\u0000b\\n\\u001f🎮\""])
        guard case .record(let p, _) = try decode(line) else { return }
        #expect(p.payload == "a\u{0}b\n\u{1F}🎮")
    }

    @Test(arguments: [
        (Fixture.purchaseLine(["userId": nil]), LedgerError.Code.invalidInput, "userId"),
        (Fixture.purchaseLine(["userId": "\"\""]), .invalidInput, "userId"),
        (Fixture.purchaseLine(["userId": "\"\(String(repeating: "x", count: 129))\""]), .invalidInput, "userId"),
        (Fixture.purchaseLine(["userId": "7"]), .invalidInput, "userId"),
        (Fixture.purchaseLine(["storeCode": "\"XX\""]), .unknownStore, "storeCode"),
        (Fixture.purchaseLine(["storeCode": nil]), .invalidInput, "storeCode"),
        (Fixture.purchaseLine(["productId": "\"\(String(repeating: "p", count: 256))\""]), .invalidInput, "productId"),
        (Fixture.purchaseLine(["productType": "\"UNKNOWN\""]), .unknownProductType, "productType"),
        (Fixture.purchaseLine(["productType": "0"]), .unknownProductType, "productType"),
        (Fixture.purchaseLine(["productType": "true"]), .invalidInput, "productType"),
        (Fixture.purchaseLine(["price": "\"-1.00\""]), .invalidInput, "price"),
        (Fixture.purchaseLine(["price": "\"-0.01\""]), .invalidInput, "price"),
        (Fixture.purchaseLine(["price": "-1"]), .invalidInput, "price"),
        (Fixture.purchaseLine(["price": "\"-\""]), .invalidInput, "price"),
        (Fixture.purchaseLine(["price": "\"--0\""]), .invalidInput, "price"),
        (Fixture.purchaseLine(["price": "\"abc\""]), .invalidInput, "price"),
        (Fixture.purchaseLine(["price": nil]), .invalidInput, "price"),
        (Fixture.purchaseLine(["currency": "\"usd\""]), .invalidInput, "currency"),
        (Fixture.purchaseLine(["currency": "\"US\""]), .invalidInput, "currency"),
        (Fixture.purchaseLine(["paymentSeq": nil]), .invalidInput, "paymentSeq"),
        (Fixture.purchaseLine(["purchaseToken": nil]), .invalidInput, "purchaseToken"),
        (Fixture.purchaseLine(["purchaseToken": "\"\(String(repeating: "t", count: 4097))\""]), .invalidInput, "purchaseToken"),
        (Fixture.purchaseLine(["transactionId": nil]), .invalidInput, "transactionId"),
        (Fixture.purchaseLine(["purchaseTime": "\"yesterday\""]), .invalidInput, "purchaseTime"),
        (Fixture.purchaseLine(["purchaseTime": "\"2026-01-01T00:00:00\""]), .invalidInput, "purchaseTime"),
        (Fixture.purchaseLine(["purchaseTime": nil]), .invalidInput, "purchaseTime"),
        (Fixture.purchaseLine(["expiryTime": "\"2026-02-01T00:00:00Z\""]), .invalidInput, "expiryTime"),
        (Fixture.purchaseLine(["productType": "\"AUTO_RENEWABLE\""]), .invalidInput, "expiryTime"),
        (Fixture.purchaseLine(["productType": "\"AUTO_RENEWABLE\"", "expiryTime": "\"2025-12-01T00:00:00Z\""]), .invalidInput, "expiryTime"),
        (Fixture.purchaseLine(["type": "\"renewal\"", "productType": "\"AUTO_RENEWABLE\"", "expiryTime": "\"2026-02-01T00:00:00Z\""]), .invalidInput, "originalTransactionId"),
        (Fixture.purchaseLine(["payload": "\"\(String(repeating: "x", count: 65_537))\""]), .invalidInput, "payload"),
        (Fixture.purchaseLine(["sandboxPayment": "\"yes\""]), .invalidInput, "sandboxPayment"),
        (Fixture.purchaseLine(["productSeq": "1.5"]), .invalidInput, "productSeq"),
        (Fixture.purchaseLine(["type": "\"teleport\""]), .invalidInput, "type"),
        (Fixture.purchaseLine(["type": nil]), .invalidInput, "type"),
        ("{not json", .invalidInput, "JSON"),
        ("[]", .invalidInput, "object"),
        // Without a token is a consume of a payment learned from a store notification (§5.2); a
        // token that is not a string is refused.
        ("{\"type\":\"consume\",\"userId\":\"u1\",\"paymentSeq\":\"P-1\",\"purchaseToken\":7}", .invalidInput, "purchaseToken"),
        ("{\"type\":\"refund\",\"time\":\"2026-01-01T00:00:00Z\"}", .invalidInput, "paymentSeq"),
        ("{\"type\":\"cancel\",\"storeCode\":\"AS\"}", .invalidInput, "originalTransactionId"),
        ("{\"type\":\"cancel\",\"storeCode\":\"ONESTORE\",\"originalTransactionId\":\"x\"}", .unknownStore, "storeCode"),
        ("{\"type\":\"restore\",\"userId\":\"u1\",\"storeCode\":\"AS\",\"purchases\":{}}", .invalidInput, "purchases"),
        ("{\"type\":\"restore\",\"userId\":\"u1\",\"storeCode\":\"AS\",\"purchases\":[\(Fixture.purchaseLine(["userId": "\"u2\""]))]}", .invalidInput, "purchases[0].userId"),
        ("{\"type\":\"restore\",\"userId\":\"u1\",\"storeCode\":\"AS\",\"purchases\":[\(Fixture.purchaseLine(["storeCode": "\"GG\""]))]}", .invalidInput, "purchases[0].storeCode"),
        ("{\"type\":\"restore\",\"userId\":\"u1\",\"storeCode\":\"AS\",\"purchases\":[\(Fixture.purchaseLine(["price": "\"x\""]))]}", .invalidInput, "purchases[0].price"),
    ])
    func badLinesAreRefusedNamingTheField(line: String, code: LedgerError.Code, field: String) {
        let error = refusal(line)
        #expect(error?.code == code, "\(line.prefix(120))")
        #expect(error?.message.contains(field) == true, "message \(error?.message ?? "none") should name \(field)")
    }

    @Test func unknownFieldsAreIgnored() throws {
        let plain = try decode(Fixture.purchaseLine())
        for extra in ["{\"a\":[1,2,3]}", "null", "\"text\"", "-1.5e300"] {
            #expect(try decode(Fixture.purchaseLine(["somethingNew": extra])) == plain, "with somethingNew: \(extra)")
        }
        let consume = #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1"}"#
        let withExtra = #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1","x":{"y":[]}}"#
        #expect(try decode(withExtra) == decode(consume))
    }

    @Test(arguments: [nil, "null", "0"])
    func consumableExpiryMayBeAbsentNullOrZero(expiry: String?) throws {
        guard case .record(let p, _) = try decode(Fixture.purchaseLine(["expiryTime": expiry])) else {
            Issue.record("not a record")
            return
        }
        #expect(p.expiryTime == nil)
        #expect(p.purchaseTime == Fixture.time("2026-01-01T00:00:00Z"))
    }

    @Test func restoreItemsBecomePurchasesOrRenewals() throws {
        let first = Fixture.purchaseLine(["productType": "\"AUTO_RENEWABLE\"", "transactionId": "\"A-1\"",
                                          "expiryTime": "\"2026-02-01T00:00:00Z\"", "type": nil, "userId": nil])
        let renewal = Fixture.purchaseLine(["productType": "\"AUTO_RENEWABLE\"", "transactionId": "\"A-2\"",
                                            "originalTransactionId": "\"A-1\"", "paymentSeq": "\"P-2\"",
                                            "expiryTime": "\"2026-02-01T00:00:00Z\"", "type": nil])
        let line = "{\"type\":\"restore\",\"userId\":\"u1\",\"storeCode\":\"AS\",\"purchases\":[\(first),\(renewal)]}"
        guard case .restore(let user, let store, _, let purchases) = try decode(line) else { return }
        #expect(user == "u1" && store == .appStore && purchases.count == 2)
        #expect(!purchases[0].isRenewal && purchases[1].isRenewal)
        #expect(purchases[0].userId == "u1")
    }
}
