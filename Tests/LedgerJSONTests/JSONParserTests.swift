import LedgerJSON
import Testing

@Suite("JSONParser: accepted input")
struct JSONParserTests {
    @Test(
        "numbers are kept exactly as written, never through Double",
        arguments: [
            "0", "-0", "-0.0", "1.10", "0.99", "1e400", "-1E-400", "1e+2", "2.50E10",
            "12345678901234567890.123456789", "123456789012345678901234567890", "0.000000000000000000001",
        ]
    )
    func numbersKeptExactly(literal: String) throws {
        #expect(try JSONParser.parse(literal) == .number(literal))
        let inArray = try JSONParser.parse("[\(literal)]")
        #expect(inArray == .array([.number(literal)]))
    }

    @Test("the literals true, false and null parse to their values")
    func literals() throws {
        #expect(try JSONParser.parse("true") == .bool(true))
        #expect(try JSONParser.parse("false") == .bool(false))
        #expect(try JSONParser.parse("null") == .null)
    }

    @Test("whitespace around and between tokens is skipped")
    func whitespace() throws {
        let value = try JSONParser.parse(" \t\r\n{ \"a\" :\n[ 1 , 2 ] }\r\n ")
        #expect(value == .object(["a": .array([.number("1"), .number("2")])]))
    }

    @Test(
        "every short escape decodes to its character",
        arguments: [
            (#""\"""#, "\""), (#""\\""#, "\\"), (#""\/""#, "/"), (#""\b""#, "\u{08}"),
            (#""\f""#, "\u{0C}"), (#""\n""#, "\n"), (#""\r""#, "\r"), (#""\t""#, "\t"),
        ]
    )
    func shortEscapes(json: String, expected: String) throws {
        #expect(try JSONParser.parse(json) == .string(expected))
    }

    @Test("\\u escapes decode, including surrogate pairs and either hex case")
    func unicodeEscapes() throws {
        #expect(try JSONParser.parse(#""\u00e9\u00C9""#) == .string("éÉ"))
        #expect(try JSONParser.parse(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try JSONParser.parse(#""\ud83d\ude00x""#) == .string("😀x"))
        #expect(try JSONParser.parse(#""\u2028\u2029""#) == .string("\u{2028}\u{2029}"))
        #expect(try JSONParser.parse(#""\uFFFF""#) == .string("\u{FFFF}"))
    }

    @Test("\\u0000 is accepted and keeps U+0000 inside the string")
    func nulEscapeKept() throws {
        let value = try JSONParser.parse(#""a\u0000b""#)
        let text = try #require(value.stringValue)
        #expect(Array(text.unicodeScalars) == ["a", "\u{0}", "b"])
        #expect(text.utf8.count == 3)
    }

    @Test("raw non-ASCII UTF-8 in strings is kept, before and after escapes")
    func rawUnicodeKept() throws {
        let text = "héllo 日本語 😀 \u{7F} \u{2028}"
        #expect(try JSONParser.parse("\"\(text)\"") == .string(text))
        #expect(try JSONParser.parse("\"\(text)\\n\(text)\"") == .string(text + "\n" + text))
    }

    @Test("long strings cross the eight-byte fast path at every alignment")
    func longStringsAtEveryAlignment() throws {
        for prefix in 0..<9 {
            let padding = String(repeating: " ", count: prefix)
            let body = String(repeating: "abcdefgh", count: 5) + "é\\\"" + String(repeating: "z", count: prefix)
            let expected = String(repeating: "abcdefgh", count: 5) + "é\"" + String(repeating: "z", count: prefix)
            #expect(try JSONParser.parse("\(padding)\"\(body)\"") == .string(expected))
        }
    }

    @Test("object fields keep input order and nested values parse")
    func objectOrderAndNesting() throws {
        let value = try JSONParser.parse(#"{"z":1,"a":{"b":[true,null,"x"]},"m":{}, "e":[]}"#)
        let object = try #require(value.objectValue)
        #expect(object.fields.map(\.key) == ["z", "a", "m", "e"])
        #expect(object["a"] == .object(["b": .array([.bool(true), .null, .string("x")])]))
        #expect(object["m"] == .object([:]))
        #expect(object["e"] == .array([]))
    }

    @Test("a repeated key keeps both fields, and lookup sees the last one")
    func duplicateKeysLastWins() throws {
        let object = try #require(try JSONParser.parse(#"{"price":"1.00","x":0,"price":"2.00"}"#).objectValue)
        #expect(object["price"] == .string("2.00"))
        #expect(object.fields.count == 3)
        #expect(object.keys == ["price", "x"])
    }

    @Test("nesting up to maxDepth is accepted")
    func nestingAtTheLimit() throws {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        var value = try JSONParser.parse(deepest)
        var depth = 0
        while let elements = value.arrayValue {
            depth += 1
            guard let first = elements.first else { break }
            value = first
        }
        #expect(depth == 64)
        #expect(try JSONParser.parse("[[1]]", maxDepth: 2) == .array([.array([.number("1")])]))
        #expect(try JSONParser.parse("1", maxDepth: 0) == .number("1"))
    }

    @Test("byte arrays, slices, raw buffers and strings parse alike")
    func inputOverloads() throws {
        let text = #"{"type":"consume","userId":"u1"}"#
        let expected: JSONValue = .object(["type": .string("consume"), "userId": .string("u1")])
        let bytes = Array(text.utf8)
        #expect(try JSONParser.parse(text) == expected)
        #expect(try JSONParser.parse(bytes) == expected)
        let framed = Array("xx\(text)yy".utf8)
        #expect(try JSONParser.parse(framed[2..<(framed.count - 2)]) == expected)
        let fromBuffer = try bytes.withUnsafeBytes { try JSONParser.parse($0) }
        #expect(fromBuffer == expected)
    }

    @Test("the contract's purchase line parses field by field")
    func contractPurchaseLine() throws {
        let line = """
        {"type":"purchase","userId":"u1","storeCode":"AS","productId":"gem_100",
         "productType":"CONSUMABLE","price":"0.99","currency":"USD",
         "paymentSeq":"P-1","purchaseToken":"tok-1","transactionId":"T-1",
         "originalTransactionId":null,"purchaseTime":"2026-01-01T00:00:00Z",
         "expiryTime":null,"payload":"character-7","sandboxPayment":false,
         "promotionPayment":false}
        """
        let object = try #require(try JSONParser.parse(line).objectValue)
        #expect(object.count == 16)
        #expect(object["price"]?.stringValue == "0.99")
        #expect(object["originalTransactionId"]?.isNull == true)
        #expect(object["sandboxPayment"]?.boolValue == false)
        #expect(object["missing"] == nil)
    }
}
