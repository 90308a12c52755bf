/// A strict RFC 8259 JSON parser that works on raw UTF-8 bytes.
///
/// The input must hold exactly one JSON value, with optional whitespace
/// (space, tab, line feed, carriage return) around it. The parser refuses:
/// invalid UTF-8 anywhere, a byte order mark, raw control characters
/// (below U+0020) inside strings, unknown escapes, unpaired surrogate escapes,
/// numbers outside the JSON grammar (`01`, `1.`, `.5`, `+1`, `NaN`,
/// `Infinity`), nesting deeper than `maxDepth`, and anything after the value.
///
/// `\u0000` is accepted and yields a string that contains U+0000. Numbers are
/// kept as their literal text (``JSONValue/number(_:)``), never through `Double`.
///
/// Recursion depth equals nesting depth, and nesting is refused past
/// `maxDepth` before it goes deeper, so hostile input such as a million `[`
/// is refused without exhausting the stack.
public struct JSONParser {
    /// The nesting depth allowed when none is given: 64 arrays or objects.
    public static let defaultMaxDepth = 64

    /// The largest `maxDepth` a caller may ask for; deeper nesting would risk the stack.
    public static let maxDepthLimit = 512

    /// Parses one JSON value from UTF-8 bytes.
    ///
    /// - Parameters:
    ///   - bytes: the UTF-8 text; it is read, never retained.
    ///   - maxDepth: how many arrays and objects may nest inside one another
    ///     (1 allows `[1]` but not `[[1]]`); at most ``maxDepthLimit``.
    /// - Throws: ``JSONSyntaxError`` naming what is wrong and the byte where it is.
    public static func parse(
        _ bytes: UnsafeRawBufferPointer,
        maxDepth: Int = defaultMaxDepth
    ) throws(JSONSyntaxError) -> JSONValue {
        precondition((0...maxDepthLimit).contains(maxDepth), "maxDepth must be in 0...\(maxDepthLimit)")
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw JSONSyntaxError(message: "expected a JSON value, found end of input", offset: 0)
        }
        var reader = Reader(
            base: base.assumingMemoryBound(to: UInt8.self),
            end: bytes.count,
            maxDepth: maxDepth
        )
        return try reader.parseDocument()
    }

    /// Parses one JSON value from an array of UTF-8 bytes.
    public static func parse(
        _ bytes: [UInt8],
        maxDepth: Int = defaultMaxDepth
    ) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONSyntaxError) in try parse(buffer, maxDepth: maxDepth) }
        }.get()
    }

    /// Parses one JSON value from a slice of UTF-8 bytes, such as one line of a larger buffer.
    public static func parse(
        _ bytes: ArraySlice<UInt8>,
        maxDepth: Int = defaultMaxDepth
    ) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONSyntaxError) in try parse(buffer, maxDepth: maxDepth) }
        }.get()
    }

    /// Parses one JSON value from a string. A Swift `String` is always valid
    /// UTF-8, so only syntax errors can occur.
    public static func parse(
        _ text: String,
        maxDepth: Int = defaultMaxDepth
    ) throws(JSONSyntaxError) -> JSONValue {
        var text = text
        return try text.withUTF8 { buffer in
            Result { () throws(JSONSyntaxError) in
                try parse(UnsafeRawBufferPointer(buffer), maxDepth: maxDepth)
            }
        }.get()
    }
}

extension JSONParser {
    /// The parser's cursor over the input bytes.
    ///
    /// Every read of `base[i]` is preceded by a check that `i < end`.
    struct Reader {
        let base: UnsafePointer<UInt8>
        let end: Int
        let maxDepth: Int
        var index = 0

        init(base: UnsafePointer<UInt8>, end: Int, maxDepth: Int) {
            self.base = base
            self.end = end
            self.maxDepth = maxDepth
        }

        /// Parses the whole input as one value with optional surrounding whitespace.
        mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
            if end >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF {
                throw JSONSyntaxError(message: "unexpected byte order mark", offset: 0)
            }
            let value = try parseValue(depth: 0)
            skipWhitespace()
            if index < end {
                throw unexpected("after the JSON value")
            }
            return value
        }

        /// Parses the value that starts at the next non-whitespace byte.
        /// `depth` is the number of arrays and objects around it.
        mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            skipWhitespace()
            guard index < end else {
                throw JSONSyntaxError(message: "expected a JSON value, found end of input", offset: index)
            }
            switch base[index] {
            case UInt8(ascii: "\""):
                return .string(try parseString())
            case UInt8(ascii: "{"):
                return try parseObject(depth: depth + 1)
            case UInt8(ascii: "["):
                return try parseArray(depth: depth + 1)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return .number(try parseNumber())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                return .null
            default:
                throw unexpected("where a JSON value was expected")
            }
        }

        private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            let open = index
            guard depth <= maxDepth else {
                throw JSONSyntaxError(message: "nesting deeper than \(maxDepth)", offset: open)
            }
            index += 1
            var fields: [(key: String, value: JSONValue)] = []
            skipWhitespace()
            if index < end, base[index] == UInt8(ascii: "}") {
                index += 1
                return .object(JSONObject(fields))
            }
            fields.reserveCapacity(8)
            while true {
                skipWhitespace()
                guard index < end else { throw unterminated("object", at: open) }
                guard base[index] == UInt8(ascii: "\"") else {
                    throw unexpected("where an object key (a string) was expected")
                }
                let key = try parseString()
                skipWhitespace()
                guard index < end else { throw unterminated("object", at: open) }
                guard base[index] == UInt8(ascii: ":") else {
                    throw unexpected("where ':' was expected after an object key")
                }
                index += 1
                let value = try parseValue(depth: depth)
                fields.append((key: key, value: value))
                skipWhitespace()
                guard index < end else { throw unterminated("object", at: open) }
                switch base[index] {
                case UInt8(ascii: ","):
                    index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return .object(JSONObject(fields))
                default:
                    throw unexpected("where ',' or '}' was expected in an object")
                }
            }
        }

        private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
            let open = index
            guard depth <= maxDepth else {
                throw JSONSyntaxError(message: "nesting deeper than \(maxDepth)", offset: open)
            }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < end, base[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                guard index < end else { throw unterminated("array", at: open) }
                elements.append(try parseValue(depth: depth))
                skipWhitespace()
                guard index < end else { throw unterminated("array", at: open) }
                switch base[index] {
                case UInt8(ascii: ","):
                    index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(elements)
                default:
                    throw unexpected("where ',' or ']' was expected in an array")
                }
            }
        }

        private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
            let start = index
            let count = literal.utf8CodeUnitCount
            let expected = literal.utf8Start
            for offset in 0..<count {
                guard start + offset < end, base[start + offset] == expected[offset] else {
                    throw JSONSyntaxError(message: "invalid literal, expected '\(literal)'", offset: start)
                }
            }
            index = start + count
        }

        mutating func skipWhitespace() {
            while index < end {
                switch base[index] {
                case 0x20, 0x0A, 0x0D, 0x09:
                    index += 1
                default:
                    return
                }
            }
        }

        // MARK: Errors

        func unterminated(_ what: String, at offset: Int) -> JSONSyntaxError {
            JSONSyntaxError(message: "unterminated \(what)", offset: offset)
        }

        /// An error for the byte at `index` (or end of input), described for a person.
        func unexpected(_ context: String) -> JSONSyntaxError {
            guard index < end else {
                return JSONSyntaxError(message: "unexpected end of input", offset: index)
            }
            let byte = base[index]
            switch byte {
            case 0x21...0x7E:
                let character = Character(Unicode.Scalar(byte))
                return JSONSyntaxError(message: "unexpected character '\(character)' \(context)", offset: index)
            case 0x00...0x7F:
                return JSONSyntaxError(
                    message: "unexpected control character \(Self.scalarName(UInt32(byte))) \(context)",
                    offset: index
                )
            default:
                guard let (scalar, _) = decodeScalar(at: index) else {
                    return JSONSyntaxError(message: "invalid UTF-8", offset: index)
                }
                return JSONSyntaxError(
                    message: "unexpected character \(Self.scalarName(scalar)) \(context)",
                    offset: index
                )
            }
        }

        /// `U+00E9` style name of a code point.
        static func scalarName(_ value: UInt32) -> String {
            let hex = String(value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }
}
