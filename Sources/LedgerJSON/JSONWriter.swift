/// Builds compact JSON text into a byte buffer, one token at a time.
///
/// Commas are written automatically; colons follow ``key(_:)``. The writer
/// does not check that calls are balanced or that keys appear only inside
/// objects: that is the caller's job, as with any streaming writer.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.field("line", 1)
/// writer.field("status", "recorded")
/// writer.endObject()
/// writer.string   // {"line":1,"status":"recorded"}
/// ```
///
/// Strings are escaped so the output is valid JSON, plain ASCII-safe for
/// control characters, and safe to embed in JavaScript: `"` and `\` and the
/// short escapes `\b \f \n \r \t`; other code points below U+0020, and
/// U+007F, as `\u00XX`; U+2028 and U+2029 as `\u2028` and `\u2029`. Every
/// other character is written as raw UTF-8.
public struct JSONWriter: Sendable {
    /// The JSON text written so far, as UTF-8.
    public private(set) var bytes: [UInt8] = []

    /// Whether the next value or key needs a comma before it.
    private var needsComma = false

    /// An empty writer.
    public init() {}

    /// An empty writer whose buffer can hold `capacity` bytes before it grows.
    public init(reservingCapacity capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// The JSON text written so far.
    public var string: String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// `text` as a JSON string literal, quotes included, escaped as ``string(_:)`` escapes it.
    public static func quoted(_ text: String) -> String {
        var writer = JSONWriter()
        writer.string(text)
        return writer.string
    }

    /// Empties the writer, keeping its buffer's capacity for reuse.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    // MARK: Structure

    /// Writes `{`.
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Writes `}`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `[`.
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Writes `]`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object key and its colon; the next call writes its value.
    public mutating func key(_ name: String) {
        separate()
        writeEscaped(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    /// Writes a string value, escaped.
    public mutating func string(_ value: String) {
        separate()
        writeEscaped(value)
        needsComma = true
    }

    /// Writes a number literal exactly as given, such as a price kept as `"0.99"`.
    ///
    /// The literal is not checked; it must follow the JSON number grammar.
    public mutating func rawNumber(_ literal: String) {
        separate()
        appendUTF8(of: literal)
        needsComma = true
    }

    /// Writes an integer.
    public mutating func int(_ value: Int) {
        separate()
        writeInteger(value)
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: Self.nullBytes)
        needsComma = true
    }

    /// Writes a whole value: numbers as their literal, objects in field order
    /// (repeated keys included).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let literal): rawNumber(literal)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let object):
            beginObject()
            for field in object.fields {
                key(field.key)
                self.value(field.value)
            }
            endObject()
        }
    }

    // MARK: Fields

    /// Writes a key and a string value, or `null` when `value` is `nil`.
    public mutating func field(_ key: String, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    /// Writes a key and a boolean value.
    public mutating func field(_ key: String, _ value: Bool) {
        self.key(key)
        bool(value)
    }

    /// Writes a key and an integer value.
    public mutating func field(_ key: String, _ value: Int) {
        self.key(key)
        int(value)
    }

    /// Writes a key and a whole value.
    public mutating func field(_ key: String, _ value: JSONValue) {
        self.key(key)
        self.value(value)
    }

    // MARK: Encoding

    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)
    private static let nullBytes: [UInt8] = Array("null".utf8)
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
    private static let lineSeparatorEscape: [UInt8] = Array(#"\u2028"#.utf8)
    private static let paragraphSeparatorEscape: [UInt8] = Array(#"\u2029"#.utf8)

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func writeInteger(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes, room for 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                scratch[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: scratch[(24 - count)...])
        }
    }

    /// Appends a string's UTF-8 in one copy.
    private mutating func appendUTF8(of text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    private mutating func writeEscaped(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            // Copy runs of bytes that need no escape in one go.
            var runStart = 0
            var index = 0
            let count = utf8.count
            while index < count {
                let byte = utf8[index]
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00..<0x20, 0x7F:
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                    appendASCIIEscape(byte)
                    index += 1
                    runStart = index
                case 0xE2 where index + 2 < count && utf8[index + 1] == 0x80
                    && (utf8[index + 2] == 0xA8 || utf8[index + 2] == 0xA9):
                    // U+2028 is E2 80 A8, U+2029 is E2 80 A9.
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                    let isLineSeparator = utf8[index + 2] == 0xA8
                    bytes.append(contentsOf: isLineSeparator ? Self.lineSeparatorEscape : Self.paragraphSeparatorEscape)
                    index += 3
                    runStart = index
                default:
                    index += 1
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendASCIIEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            bytes.append(UInt8(ascii: "u"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }
}
