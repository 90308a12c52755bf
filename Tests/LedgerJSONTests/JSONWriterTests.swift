import LedgerJSON
import Testing

@Suite("JSONWriter")
struct JSONWriterTests {
    @Test("an ingest result line is written compactly, commas placed automatically")
    func ingestLine() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("line", 2)
        writer.field("status", "rejected")
        writer.key("error")
        writer.beginObject()
        writer.field("code", "USER_INVALID")
        writer.field("message", "payment P-1 belongs to another user")
        writer.endObject()
        writer.endObject()
        #expect(writer.string == #"{"line":2,"status":"rejected","error":{"code":"USER_INVALID","message":"payment P-1 belongs to another user"}}"#)
    }

    @Test("arrays of mixed values, nested empties, and every field helper")
    func arraysAndFieldHelpers() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.int(-42)
        writer.int(Int.min)
        writer.rawNumber("0.99")
        writer.bool(true)
        writer.null()
        writer.beginArray()
        writer.endArray()
        writer.beginObject()
        writer.field("expiryTime", nil as String?)
        writer.field("sandboxPayment", false)
        writer.field("productSeq", 0)
        writer.field("extra", .array([.number("1e400"), .string("x")]))
        writer.endObject()
        writer.beginObject()
        writer.endObject()
        writer.endArray()
        #expect(writer.string == #"[-42,-9223372036854775808,0.99,true,null,[],{"expiryTime":null,"sandboxPayment":false,"productSeq":0,"extra":[1e400,"x"]},{}]"#)
    }

    @Test("value(_:) writes numbers verbatim and objects in field order, repeats included")
    func valueRoundTrip() throws {
        let text = #"{"z":[1.10,-0,1e400,{"a":null}],"a":"é\n","z":{},"t":true,"f":false}"#
        var writer = JSONWriter()
        writer.value(try JSONParser.parse(text))
        #expect(writer.string == text)
    }

    @Test("reset empties the writer so it can be reused for the next line")
    func resetForReuse() {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.int(1)
        writer.reset()
        writer.int(2)
        #expect(writer.bytes == Array("2".utf8))
    }

    /// The escape the writer must produce for each code point below 0x80.
    private static func expectedEscape(_ code: UInt8) -> String {
        switch code {
        case 0x22: return #"\""#
        case 0x5C: return #"\\"#
        case 0x08: return #"\b"#
        case 0x0C: return #"\f"#
        case 0x0A: return #"\n"#
        case 0x0D: return #"\r"#
        case 0x09: return #"\t"#
        case 0x00..<0x20, 0x7F:
            let hex = String(code, radix: 16)
            return #"\u00"# + (hex.count == 1 ? "0" + hex : hex)
        default:
            return String(Character(Unicode.Scalar(code)))
        }
    }

    @Test("every code point from U+0000 to U+007F is escaped as specified and round-trips", arguments: UInt8(0)...0x7F)
    func asciiEscaping(code: UInt8) throws {
        let text = "a" + String(Character(Unicode.Scalar(code))) + "b"
        var writer = JSONWriter()
        writer.string(text)
        #expect(writer.string == "\"a" + Self.expectedEscape(code) + "b\"")
        #expect(try JSONParser.parse(writer.bytes) == .string(text))
    }

    @Test("U+2028 and U+2029 are escaped; other non-ASCII stays raw UTF-8")
    func nonASCII() throws {
        let text = "\u{2028}x\u{2029}é日本😀👩‍👩‍👧\u{2027}\u{202A}\u{FFFF}\u{10FFFF}"
        var writer = JSONWriter()
        writer.string(text)
        #expect(writer.string == #""\u2028x\u2029"# + "é日本😀👩‍👩‍👧\u{2027}\u{202A}\u{FFFF}\u{10FFFF}\"")
        #expect(try JSONParser.parse(writer.bytes) == .string(text))
    }

    @Test("quoted gives a standalone JSON string literal")
    func quotedLiteral() {
        #expect(JSONWriter.quoted("u1") == #""u1""#)
        #expect(JSONWriter.quoted("a\"b\n\u{2028}") == #""a\"b\n\u2028""#)
    }

    @Test("keys are escaped like strings")
    func keyEscaping() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("a\"b\u{0}", "v")
        writer.endObject()
        #expect(writer.string == #"{"a\"b\u0000":"v"}"#)
        #expect(try JSONParser.parse(writer.bytes).objectValue?["a\"b\u{0}"] == .string("v"))
    }

    @Test("a payload of every code point below U+0800 and some emoji round-trips through the parser")
    func wideRoundTrip() throws {
        var scalars = String.UnicodeScalarView()
        for value in UInt32(0)..<0x800 { scalars.append(Unicode.Scalar(value)!) }
        let text = String(scalars) + "😀🎮\u{1F1F0}\u{1F1F7}\u{2028}\u{2029}\u{0}"
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("payload", text)
        writer.endObject()
        #expect(try JSONParser.parse(writer.bytes) == .object(["payload": .string(text)]))
        #expect(!writer.bytes.contains { $0 < 0x20 || $0 == 0x7F })
    }
}
