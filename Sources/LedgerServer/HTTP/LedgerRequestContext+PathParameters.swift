import Hummingbird
import PurchaseLedger

extension LedgerRequestContext {
    /// The path parameter `name` (such as `userId` in `/v1/users/{userId}/…`), percent-decoded
    /// once: the router matches the path as sent, so `a%20b` is `a b`, `a%2Fb` is `a/b` and
    /// `%2541` is `%41`. 400 `INVALID_INPUT` naming the parameter when a `%` is not followed by two
    /// hex digits or the bytes are not UTF-8. Every route with a path parameter reads it here.
    func pathParameter(_ name: String) throws -> String {
        let raw = parameters.get(name) ?? ""
        guard let decoded = PercentDecoding.decode(raw) else {
            throw APIError.invalid(name, "not valid percent-encoded UTF-8 (RFC 3986: %XX for each byte)")
        }
        return decoded
    }

    /// The path's `userId`, decoded, with the contract's rule for a user id (1 to 128 Unicode
    /// scalars, no U+0000: the rule `ledger ingest` and `--user` apply).
    func userId() throws -> String {
        let userId = try pathParameter("userId")
        do {
            try LedgerCommand.validateUserId(userId)
        } catch {
            throw APIError(error)
        }
        return userId
    }
}

/// RFC 3986 percent-decoding of a path segment: `%XX` is the byte XX; every other byte stands
/// for itself (`+` is a plus: form encoding is for query strings, not paths).
enum PercentDecoding {
    /// The text `raw` encodes, or nil when an escape is malformed or the bytes are not UTF-8.
    static func decode(_ raw: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.utf8.count)
        var iterator = raw.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
