extension JSONParser.Reader {
    /// Parses the string whose opening quote is at `index`, leaving `index`
    /// after its closing quote.
    ///
    /// Fast path: a string without escapes is validated in place and turned
    /// into a `String` straight from the input bytes. The first backslash
    /// switches to ``parseEscapedString(quote:start:)``, which copies.
    mutating func parseString() throws(JSONSyntaxError) -> String {
        let quote = index
        index += 1
        let start = index
        while true {
            skipPlainASCII()
            guard index < end else { break }
            let byte = base[index]
            if byte >= 0x80 {
                index = try validateScalar(at: index)
            } else if byte == UInt8(ascii: "\"") {
                let text = makeString(from: start, to: index)
                index += 1
                return text
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(quote: quote, start: start)
            } else if byte < 0x20 {
                throw controlCharacterInString(byte)
            } else {
                index += 1
            }
        }
        throw unterminated("string", at: quote)
    }

    /// Advances `index` past bytes that need no attention inside a string
    /// (ASCII from U+0020 up, other than `"` and `\`), eight at a time.
    @inline(__always)
    private mutating func skipPlainASCII() {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index &+ 8 <= end {
            // Little-endian order, so the lowest flagged byte is the first in memory.
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            // Bit 7 of a byte is set when that byte is a quote, a backslash,
            // below 0x20 or at least 0x80. Later bytes may be flagged falsely
            // through borrows, never the first one, and never missed.
            let flagged = ((quote &- ones) & ~quote
                | (backslash &- ones) & ~backslash
                | (word &- ones &* 0x20)
                | word) & highs
            if flagged != 0 {
                index &+= flagged.trailingZeroBitCount &>> 3
                return
            }
            index &+= 8
        }
    }

    /// The string made of the already validated UTF-8 bytes `start..<stop`.
    private func makeString(from start: Int, to stop: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + start, count: stop - start), as: UTF8.self)
    }

    /// The slow path: `start..<index` is a validated prefix without escapes,
    /// and `index` is at a backslash.
    private mutating func parseEscapedString(quote: Int, start: Int) throws(JSONSyntaxError) -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(index - start + 16)
        buffer.append(contentsOf: UnsafeBufferPointer(start: base + start, count: index - start))
        while true {
            let runStart = index
            skipPlainASCII()
            if index > runStart {
                buffer.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: index - runStart))
            }
            guard index < end else { break }
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: buffer, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                try appendEscape(to: &buffer)
            } else if byte < 0x20 {
                throw controlCharacterInString(byte)
            } else if byte < 0x80 {
                buffer.append(byte)
                index += 1
            } else {
                let next = try validateScalar(at: index)
                buffer.append(contentsOf: UnsafeBufferPointer(start: base + index, count: next - index))
                index = next
            }
        }
        throw unterminated("string", at: quote)
    }

    /// Decodes the escape at `index` (a backslash) into UTF-8 in `buffer`.
    private mutating func appendEscape(to buffer: inout [UInt8]) throws(JSONSyntaxError) {
        let backslash = index
        guard index + 1 < end else {
            throw JSONSyntaxError(message: "unterminated escape sequence", offset: backslash)
        }
        let code = base[index + 1]
        index += 2
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
            buffer.append(code)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            let scalar = try readUnicodeEscape(backslash: backslash)
            appendUTF8(scalar, to: &buffer)
        default:
            index = backslash
            let shown = (0x21...0x7E).contains(code) ? "'\\\(Character(Unicode.Scalar(code)))'" : "'\\'"
            throw JSONSyntaxError(message: "invalid escape sequence \(shown) in string", offset: backslash)
        }
    }

    /// Reads the four hex digits after `\u` (and a second `\uXXXX` for a
    /// surrogate pair); `index` is just after the `u`.
    private mutating func readUnicodeEscape(backslash: Int) throws(JSONSyntaxError) -> UInt32 {
        let first = try readHex4(backslash: backslash)
        switch first {
        case 0xD800...0xDBFF:
            let second = index
            guard second + 1 < end, base[second] == UInt8(ascii: "\\"), base[second + 1] == UInt8(ascii: "u") else {
                throw unpairedSurrogate(first, at: backslash)
            }
            index += 2
            let low = try readHex4(backslash: second)
            guard (0xDC00...0xDFFF).contains(low) else {
                throw unpairedSurrogate(first, at: backslash)
            }
            return 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00)
        case 0xDC00...0xDFFF:
            throw unpairedSurrogate(first, at: backslash)
        default:
            return first
        }
    }

    private mutating func readHex4(backslash: Int) throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < end else {
                throw JSONSyntaxError(message: "unterminated \\u escape sequence", offset: backslash)
            }
            let byte = base[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw JSONSyntaxError(message: "invalid \\u escape sequence, expected 4 hex digits", offset: backslash)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            buffer.append(UInt8(scalar))
        case 0x80..<0x800:
            buffer.append(UInt8(0xC0 | scalar >> 6))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            buffer.append(UInt8(0xE0 | scalar >> 12))
            buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        default:
            buffer.append(UInt8(0xF0 | scalar >> 18))
            buffer.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: UTF-8 validation

    /// Checks the multi-byte UTF-8 sequence whose lead byte is at `position`
    /// and returns the offset just after it.
    func validateScalar(at position: Int) throws(JSONSyntaxError) -> Int {
        guard let (_, length) = decodeScalar(at: position) else {
            throw JSONSyntaxError(message: "invalid UTF-8", offset: position)
        }
        return position + length
    }

    /// Decodes the UTF-8 sequence at `position` per RFC 3629 (no overlong
    /// forms, no surrogates, nothing above U+10FFFF), or `nil` when invalid
    /// or cut short by the end of the input.
    func decodeScalar(at position: Int) -> (scalar: UInt32, length: Int)? {
        let lead = base[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0x00...0x7F: return (UInt32(lead), 1)
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: return nil
        }
        guard position + length <= end else { return nil }
        let second = base[position + 1]
        guard second >= lower, second <= upper else { return nil }
        var scalar = UInt32(lead) & (0xFF >> (length + 1))
        scalar = scalar << 6 | UInt32(second & 0x3F)
        var offset = 2
        while offset < length {
            let byte = base[position + offset]
            guard byte & 0xC0 == 0x80 else { return nil }
            scalar = scalar << 6 | UInt32(byte & 0x3F)
            offset += 1
        }
        return (scalar, length)
    }

    // MARK: Errors

    private func controlCharacterInString(_ byte: UInt8) -> JSONSyntaxError {
        JSONSyntaxError(
            message: "unescaped control character \(JSONParser.Reader.scalarName(UInt32(byte))) in string",
            offset: index
        )
    }

    private func unpairedSurrogate(_ value: UInt32, at offset: Int) -> JSONSyntaxError {
        let hex = String(value, radix: 16, uppercase: true)
        return JSONSyntaxError(message: "unpaired surrogate escape \\u\(hex) in string", offset: offset)
    }
}
