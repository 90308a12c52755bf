/// Strict base64 decoding (RFC 4648), for signed data where two spellings of the same bytes
/// must not both be accepted.
///
/// Refuses characters outside the alphabet (whitespace included), misplaced or missing padding
/// in `.standard`, any padding in `.url`, a length no encoding can have, and a last character
/// whose unused low bits are not zero: every byte string has exactly one accepted spelling.
enum Base64 {
    /// Which of RFC 4648's two alphabets, and its padding rule.
    enum Alphabet {
        /// §4: `A-Z a-z 0-9 + /`, padded with `=` to a multiple of four characters (JWS `x5c`).
        case standard
        /// §5: `A-Z a-z 0-9 - _`, without padding (JWS compact serialization, RFC 7515 §2).
        case url
    }

    /// The bytes `text` encodes, or `nil` when it is not the canonical encoding of any bytes.
    static func decode<Text: Collection<UInt8>>(_ text: Text, alphabet: Alphabet) -> [UInt8]? {
        if let result = text.withContiguousStorageIfAvailable({ decode($0, alphabet: alphabet) }) {
            return result
        }
        return Array(text).withUnsafeBufferPointer { decode($0, alphabet: alphabet) }
    }

    private static func decode(_ text: UnsafeBufferPointer<UInt8>, alphabet: Alphabet) -> [UInt8]? {
        var count = text.count
        if alphabet == .standard {
            guard count % 4 == 0 else { return nil }
            var padding = 0
            while padding < 2, count > 0, text[count - 1] == UInt8(ascii: "=") {
                count -= 1
                padding += 1
            }
            guard padding == (4 - count % 4) % 4 else { return nil }
        }
        guard count % 4 != 1 else { return nil }
        let table = alphabet == .standard ? standardTable : urlTable
        var out = [UInt8](repeating: 0, count: count * 3 / 4)
        var written = 0
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        for index in 0..<count {
            let value = table[Int(text[index])]
            guard value < 64 else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out[written] = UInt8(truncatingIfNeeded: accumulator >> bits)
                written += 1
                accumulator &= (1 << bits) - 1
            }
        }
        // The 2 or 4 bits left over from the last character must be zero.
        guard accumulator == 0 else { return nil }
        return out
    }

    /// Each byte's value in the alphabet, or 0xFF for a byte outside it.
    private static let standardTable = table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    private static let urlTable = table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    private static func table(_ symbols: String) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in symbols.utf8.enumerated() {
            table[Int(symbol)] = UInt8(value)
        }
        return table
    }
}
