import Foundation

/// Base64url without padding (RFC 7515 §2), as JWTs are written.
package enum Base64URL {
    package static func encode(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// The unsigned part of a compact JWT: base64url header and claims, joined by a dot. Claims are
/// written with sorted keys so that equal claims give equal JWTs (and tests can read them back).
enum JWTSigningInput {
    static func make(header: [String: String], claims: [String: JWTClaim]) -> String {
        let headerJSON = "{" + header.sorted { $0.key < $1.key }.map { "\(quote($0.key)):\(quote($0.value))" }
            .joined(separator: ",") + "}"
        let claimsJSON = "{" + claims.sorted { $0.key < $1.key }.map { "\(quote($0.key)):\($0.value.json)" }
            .joined(separator: ",") + "}"
        return Base64URL.encode(Data(headerJSON.utf8)) + "." + Base64URL.encode(Data(claimsJSON.utf8))
    }

    /// A JSON string literal.
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A claim's value: the JWTs here hold only strings and integer times.
enum JWTClaim: Sendable {
    case string(String)
    case integer(Int64)

    var json: String {
        switch self {
        case .string(let text): return JWTSigningInput.quote(text)
        case .integer(let value): return String(value)
        }
    }
}
