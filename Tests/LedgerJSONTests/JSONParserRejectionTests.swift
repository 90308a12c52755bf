import LedgerJSON
import Testing

@Suite("JSONParser: refused input")
struct JSONParserRejectionTests {
    /// The error parsing `bytes` throws, or `nil` when it parses.
    private func syntaxError(_ bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) -> JSONSyntaxError? {
        do {
            _ = try JSONParser.parse(bytes, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    private func syntaxError(_ text: String) -> JSONSyntaxError? {
        syntaxError(Array(text.utf8))
    }

    @Test(
        "numbers outside the JSON grammar are refused",
        arguments: [
            "01", "-01", "00", "1.", "-1.", ".5", "+1", "-", "1e", "1e+", "1E-", "1.e5", "0x10",
            "NaN", "Infinity", "-Infinity", "--1", "- 1", "1.5.2", "[01]", "{\"price\":1.}",
        ]
    )
    func invalidNumbers(text: String) throws {
        let error = try #require(syntaxError(text))
        #expect(!error.message.isEmpty)
    }

    @Test("a leading zero is named in the message, at the number's first byte")
    func leadingZeroMessage() throws {
        let error = try #require(syntaxError(#"{"n":012}"#))
        #expect(error.description == "invalid number (leading zeros are not allowed) at byte 6")
        #expect(error.offset == 5)
    }

    @Test(
        "invalid UTF-8 inside a string is refused at the offending byte",
        arguments: [
            [0xFF], [0xFE], [0x80], [0xBF],                  // never valid, lone continuation bytes
            [0xC3, 0x22], [0xE6, 0x97, 0x22], [0xF0, 0x9F, 0x98, 0x22],  // truncated before the quote
            [0xE6, 0x41, 0x41],                              // lead byte without continuation
            [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xE0, 0x9F, 0xBF], [0xF0, 0x80, 0x80, 0xAF],  // overlong
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],          // UTF-16 surrogates D800 and DFFF encoded in UTF-8
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],  // above U+10FFFF
        ] as [[UInt8]]
    )
    func invalidUTF8InString(sequence: [UInt8]) throws {
        let input = Array(#"["ok","ab"#.utf8) + sequence + Array(#"cd"]"#.utf8)
        let error = try #require(syntaxError(input))
        #expect(error.message == "invalid UTF-8")
        #expect(error.offset == 9)
    }

    @Test("invalid UTF-8 is refused when the input ends inside a multi-byte sequence")
    func truncatedAtEndOfInput() throws {
        let error = try #require(syntaxError(Array(#""ab"#.utf8) + [0xF0, 0x9F]))
        #expect(error.description == "invalid UTF-8 at byte 4")
    }

    @Test("invalid UTF-8 outside strings is refused, valid non-ASCII there is named")
    func invalidUTF8OutsideStrings() throws {
        #expect(syntaxError([0xFF])?.description == "invalid UTF-8 at byte 1")
        #expect(syntaxError(Array("[1,".utf8) + [0xC0, 0x80] + Array("]".utf8))?.message == "invalid UTF-8")
        #expect(syntaxError(Array("{".utf8) + [0xED, 0xA0, 0x80] + Array("}".utf8))?.message == "invalid UTF-8")
        let named = try #require(syntaxError("[é]"))
        #expect(named.message == "unexpected character U+00E9 where a JSON value was expected")
    }

    @Test("a byte order mark is refused")
    func byteOrderMark() {
        #expect(syntaxError([0xEF, 0xBB, 0xBF] + Array("{}".utf8))?.message == "unexpected byte order mark")
    }

    @Test("every raw control character inside a string is refused", arguments: UInt8(0)..<0x20)
    func rawControlCharacters(byte: UInt8) throws {
        let error = try #require(syntaxError(Array(#""a"#.utf8) + [byte] + Array(#"b""#.utf8)))
        #expect(error.message.hasPrefix("unescaped control character U+00"))
        #expect(error.offset == 2)
    }

    @Test(
        "unpaired surrogate escapes are refused",
        arguments: [#""\uD83D""#, #""\uDE00""#, #""\uD83Dx""#, #""\uD83D\u0041""#, #""\uD83D\uD83D""#, #""\uDBFF\n""#]
    )
    func unpairedSurrogates(json: String) throws {
        let error = try #require(syntaxError(json))
        #expect(error.message.hasPrefix("unpaired surrogate escape"))
        #expect(error.offset == 1)
    }

    @Test(
        "malformed escapes are refused",
        arguments: [#""\x""#, #""\'""#, #""\U0041""#, #""\u12""#, #""\u12G4""#, #""\"#, #""\u"#, #""\ ""#]
    )
    func malformedEscapes(json: String) {
        #expect(syntaxError(json) != nil)
    }

    @Test(
        "malformed structure is refused",
        arguments: [
            "", " ", "{", "[", "]", "}", "[1,]", #"{"a":1,}"#, #"{"a"}"#, #"{"a":}"#, "{a:1}", "{'a':1}",
            "[1 2]", #"{"a":1 "b":2}"#, "tru", "nul", "fals", "True", "NULL", "[,1]", "[1]]", "{}}",
            "/* c */ 1", "1 // c", #"{"a":1;"b":2}"#, "[\"a\"\u{0B}]", "\u{A0}1",
        ]
    )
    func malformedStructure(text: String) {
        #expect(syntaxError(text) != nil)
    }

    @Test("anything after the single value is refused", arguments: ["1 2", "{} x", #""a" "b""#, "null,", "[] []", "0 0"])
    func trailingGarbage(text: String) throws {
        let error = try #require(syntaxError(text))
        #expect(error.message.hasSuffix("after the JSON value"))
    }

    @Test("an unterminated string is reported at its opening quote")
    func unterminatedStringMessage() throws {
        let error = try #require(syntaxError(#"{"userId":"u1","x":"abc"#))
        #expect(error.description == "unterminated string at byte 20")
        #expect(syntaxError(#"["a\"]"#)?.message == "unterminated string")
    }

    @Test("unterminated containers are reported at their opening bracket")
    func unterminatedContainers() {
        #expect(syntaxError(#"{"a":[1,2"#)?.description == "unterminated array at byte 6")
        #expect(syntaxError(#"[{"a":1"#)?.description == "unterminated object at byte 2")
        #expect(syntaxError("")?.description == "expected a JSON value, found end of input at byte 1")
    }

    @Test("nesting one deeper than maxDepth is refused at the bracket that exceeds it")
    func nestingTooDeep() throws {
        let error = try #require(syntaxError(Array(repeating: UInt8(ascii: "["), count: 65) + [0x5D]))
        #expect(error.description == "nesting deeper than 64 at byte 65")
        #expect(syntaxError(Array("[[1]]".utf8), maxDepth: 1)?.message == "nesting deeper than 1")
        #expect(syntaxError(Array("[]".utf8), maxDepth: 0)?.offset == 0)
    }

    @Test("a million opening brackets or braces are refused without exhausting the stack")
    func hostileNesting() throws {
        let brackets = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        #expect(syntaxError(brackets)?.offset == 64)
        let braces = Array(String(repeating: #"{"a":"#, count: 200_000).utf8)
        #expect(syntaxError(braces)?.message == "nesting deeper than 64")
        let mixed = Array(String(repeating: #"[{"k":"#, count: 200_000).utf8)
        #expect(syntaxError(mixed)?.message == "nesting deeper than 64")
    }
}
