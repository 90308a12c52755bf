import Crypto
import Foundation

extension SHA256 {
    /// The SHA-256 digest of `bytes` as 64 lowercase hexadecimal digits, as `sha256sum` prints
    /// it: migration checksums and the `purchaseTokenSha256` of events.
    static func lowercaseHex(of bytes: some DataProtocol) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(SHA256.byteCount * 2)
        for byte in hash(data: bytes) {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
