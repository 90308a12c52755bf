import Crypto
import Foundation

/// How a delivery is signed (README, "Webhooks"): `Ledger-Signature: t=TIMESTAMP,v1=HEX`, where
/// TIMESTAMP is the sending time in UNIX seconds and HEX is
/// `HMAC-SHA256(secret, TIMESTAMP + "." + body)` in lowercase hexadecimal, the key being the
/// secret's UTF-8 text. Each attempt is signed again with its own time, so a receiver that
/// refuses old timestamps refuses a replayed request, and one that compares the HMAC refuses a
/// forged one.
public enum WebhookSignature {
    /// The header that carries the signature.
    public static let header = "Ledger-Signature"

    /// A new signing secret: `whsec_` and 64 hexadecimal digits (32 random bytes from the
    /// system's cryptographic generator).
    public static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return "whsec_" + hex(bytes)
    }

    /// The header's value for `body` sent at `timestamp` (UNIX seconds).
    public static func value(secret: String, timestamp: Int64, body: some DataProtocol) -> String {
        "t=\(timestamp),v1=" + hex(mac(secret: secret, timestamp: timestamp, body: body))
    }

    static func mac(secret: String, timestamp: Int64, body: some DataProtocol) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        hmac.update(data: Array("\(timestamp).".utf8))
        hmac.update(data: Array(body))
        return Array(hmac.finalize())
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
