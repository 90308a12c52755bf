import Crypto
import Foundation

/// An API key: `lk_` and 43 base64url characters (32 random bytes). The key is shown once, when
/// it is made; the ledger keeps only its SHA-256.
public enum APIKey {
    /// The prefix every key starts with, so a key is told apart from a JWT in `Authorization`.
    public static let prefix = "lk_"

    /// A new random key, from the system's cryptographic generator.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return prefix + Base64URL.encode(bytes)
    }

    /// The SHA-256 of the key's UTF-8 text: what `ledger.api_keys.key_sha256` holds.
    public static func digest(_ key: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(key.utf8)))
    }

    /// Whether two byte strings are equal, in a time that depends only on their lengths.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// base64url without padding (RFC 4648 §5), as JWTs and API keys use it.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url with or without padding; nil when it is not base64url.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0.isBase64URLDigit }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }
}

private extension UInt8 {
    var isBase64URLDigit: Bool {
        (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || (0x30...0x39).contains(self)
            || self == 0x2D || self == 0x5F || self == 0x3D
    }
}
