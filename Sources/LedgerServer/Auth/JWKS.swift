import LedgerJSON
import _CryptoExtras
import Foundation
import PurchaseLedger

/// A JSON Web Key Set (RFC 7517) of RSA signing keys, by key id: Google's published keys
/// (`https://www.googleapis.com/oauth2/v3/certs`), saved to a file the operator refreshes.
public struct JWKS: Sendable {
    let keys: [String: _RSA.Signing.PublicKey]

    /// Reads `{"keys":[{"kty":"RSA","kid":…,"n":…,"e":…},…]}`; keys of other types or uses are
    /// skipped. Throws naming the file and the problem.
    public init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JWKSError("cannot read the JWKS file \(path)")
        }
        try self.init(json: Array(data), source: path)
    }

    /// Parses a JWKS document; `source` names it in errors.
    public init(json: [UInt8], source: String = "JWKS") throws {
        guard let document = try? JSONParser.parse(json), let list = document.objectValue?["keys"]?.arrayValue else {
            throw JWKSError("\(source): expected a JSON object with a \"keys\" array")
        }
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for entry in list {
            guard let key = entry.objectValue, key["kty"]?.stringValue == "RSA",
                  key["use"]?.stringValue ?? "sig" == "sig",
                  let kid = key["kid"]?.stringValue,
                  let n = key["n"]?.stringValue.flatMap({ Base64URL.decode($0) }),
                  let e = key["e"]?.stringValue.flatMap({ Base64URL.decode($0) })
            else { continue }
            do {
                keys[kid] = try _RSA.Signing.PublicKey(n: n, e: e)
            } catch {
                throw JWKSError("\(source): key \(kid) is not an RSA public key of 2048 bits or more")
            }
        }
        guard !keys.isEmpty else { throw JWKSError("\(source): no RSA signing keys") }
        self.keys = keys
    }
}

/// A JWKS file that cannot be used.
public struct JWKSError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
