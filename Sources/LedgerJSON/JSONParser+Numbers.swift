extension JSONParser.Reader {
    /// Parses the number at `index` per the JSON grammar
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    /// and returns its literal text unchanged.
    mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = index
        if base[index] == UInt8(ascii: "-") {
            index += 1
        }
        guard index < end, isDigit(base[index]) else {
            throw invalidNumber("expected a digit", start: start)
        }
        if base[index] == UInt8(ascii: "0") {
            index += 1
            if index < end, isDigit(base[index]) {
                throw invalidNumber("leading zeros are not allowed", start: start)
            }
        } else {
            skipDigits()
        }
        if index < end, base[index] == UInt8(ascii: ".") {
            index += 1
            guard index < end, isDigit(base[index]) else {
                throw invalidNumber("expected a digit after '.'", start: start)
            }
            skipDigits()
        }
        if index < end, base[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < end, base[index] == UInt8(ascii: "+") || base[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < end, isDigit(base[index]) else {
                throw invalidNumber("expected a digit in the exponent", start: start)
            }
            skipDigits()
        }
        // The bytes are all ASCII, so decoding cannot fail or substitute.
        return String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    private mutating func skipDigits() {
        while index < end, isDigit(base[index]) {
            index += 1
        }
    }

    private func invalidNumber(_ reason: String, start: Int) -> JSONSyntaxError {
        JSONSyntaxError(message: "invalid number (\(reason))", offset: start)
    }
}
