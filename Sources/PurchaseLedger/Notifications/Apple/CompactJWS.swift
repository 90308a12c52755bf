import Foundation
import SwiftASN1
import X509
import LedgerJSON

/// A compact JWS (RFC 7515 §7.1) taken apart and decoded, nothing verified yet.
///
/// ``init(_:field:)`` is docs/contract.md §5.2 step 1 (`INVALID_INPUT`); ``certificates()`` is the
/// header's part of step 2 (`SIGNATURE_INVALID`). Every message starts with `field`.
struct CompactJWS {
    /// The JSON field the JWS came from, such as `signedPayload`.
    let field: String
    /// The decoded protected header.
    let header: JSONObject
    /// The decoded payload.
    let payload: JSONObject
    /// `<header>.<payload>` exactly as received: the bytes the signature covers.
    let signingInput: [UInt8]
    /// The decoded signature.
    let signature: [UInt8]
    /// The payload's `signedDate`, when it has one.
    let signedDate: Date?

    /// Splits `compact` into its three parts and decodes them.
    ///
    /// - Throws: `LedgerError(.invalidInput, ...)` when `compact` is not three `.`-separated
    ///   parts, a part is not base64url (RFC 7515: no padding), the header or the payload is not
    ///   a JSON object, or the payload's `signedDate` is not epoch milliseconds.
    init(_ compact: String, field: String) throws {
        self.field = field
        let text = Array(compact.utf8)
        var dots: [Int] = []
        text.withUnsafeBufferPointer { bytes in
            for index in bytes.indices where bytes[index] == UInt8(ascii: ".") {
                dots.append(index)
                if dots.count == 3 { break }
            }
        }
        guard dots.count == 2 else {
            let found = dots.count == 3 ? "more than 3" : "\(dots.count + 1)"
            throw LedgerError(.invalidInput,
                              "\(field): not a compact JWS: expected 3 base64url parts separated by '.', found \(found)")
        }
        let headerPart = text[..<dots[0]]
        let payloadPart = text[(dots[0] + 1)..<dots[1]]
        let signaturePart = text[(dots[1] + 1)...]
        header = try Self.object(headerPart, "\(field): the header")
        payload = try Self.object(payloadPart, "\(field): the payload")
        guard let signature = Base64.decode(signaturePart, alphabet: .url) else {
            throw LedgerError(.invalidInput, "\(field): the signature is not base64url (RFC 7515: A-Z a-z 0-9 - _, no padding)")
        }
        self.signature = signature
        signingInput = Array(text[..<dots[1]])
        signedDate = try Self.signedDate(payload, field)
    }

    /// The leaf, intermediate and carried root of the header's `x5c`, after the header checks.
    ///
    /// - Throws: `LedgerError(.signatureInvalid, ...)` when `alg` is not `ES256`, the header has
    ///   `crit`, or `x5c` is not an array of exactly three standard-base64 DER certificates.
    func certificates() throws -> [Certificate] {
        switch header["alg"] {
        case .string("ES256"):
            break
        case .string(let alg):
            throw LedgerError(.signatureInvalid, "\(field).header.alg: \(alg.isEmpty ? "an empty string" : Self.excerpt(alg)) is not ES256")
        case nil:
            throw LedgerError(.signatureInvalid, "\(field).header.alg: missing; only ES256 is accepted")
        case let other?:
            throw LedgerError(.signatureInvalid, "\(field).header.alg: a \(other.typeName) is not ES256")
        }
        if header["crit"] != nil {
            throw LedgerError(.signatureInvalid,
                              "\(field).header.crit: critical header parameters are not supported (RFC 7515 §4.1.11)")
        }
        guard let x5cValue = header["x5c"] else {
            throw LedgerError(.signatureInvalid,
                              "\(field).header.x5c: missing; expected 3 certificates (leaf, intermediate, root)")
        }
        guard let x5c = x5cValue.arrayValue else {
            throw LedgerError(.signatureInvalid,
                              "\(field).header.x5c: a \(x5cValue.typeName), expected an array of 3 certificates")
        }
        guard x5c.count == 3 else {
            throw LedgerError(.signatureInvalid,
                              "\(field).header.x5c: holds \(x5c.count) certificates, expected 3 (leaf, intermediate, root)")
        }
        return try x5c.enumerated().map { index, entry in
            let name = "\(field).header.x5c[\(index)]"
            guard let text = entry.stringValue else {
                throw LedgerError(.signatureInvalid, "\(name): a \(entry.typeName), expected a base64 DER certificate")
            }
            guard let der = Base64.decode(text.utf8, alphabet: .standard) else {
                throw LedgerError(.signatureInvalid,
                                  "\(name): not standard base64 (RFC 4648 §4, padded; base64url is refused here)")
            }
            let certificate: Certificate
            do {
                certificate = try Certificate(derEncoded: der)
            } catch {
                throw LedgerError(.signatureInvalid, "\(name): not a DER X.509 certificate")
            }
            guard let unusedBits = Self.signatureUnusedBits(der), unusedBits == 0 else {
                throw LedgerError(.signatureInvalid,
                                  "\(name): not a DER X.509 certificate (its signature BIT STRING declares unused bits)")
            }
            return certificate
        }
    }

    /// The unused-bits count of the certificate's signature BIT STRING (its third element).
    ///
    /// swift-certificates accepts a count above zero when those bits are zero and verifies the
    /// same octets, so a certificate would have several encodings; X.509 signatures are whole
    /// octets (RFC 5280 §4.1.1.3), and OpenSSL refuses the others too.
    private static func signatureUnusedBits(_ der: [UInt8]) -> Int? {
        guard let root = try? DER.parse(der), case .constructed(let elements) = root.content else { return nil }
        let parts = Array(elements)
        guard parts.count == 3, let signature = try? ASN1BitString(derEncoded: parts[2]) else { return nil }
        return signature.paddingBits
    }

    /// Decodes one base64url part holding a JSON object.
    private static func object(_ part: ArraySlice<UInt8>, _ name: String) throws -> JSONObject {
        guard let bytes = Base64.decode(part, alphabet: .url) else {
            throw LedgerError(.invalidInput, "\(name) is not base64url (RFC 7515: A-Z a-z 0-9 - _, no padding)")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw LedgerError(.invalidInput, "\(name) is not JSON: \(error)")
        }
        guard let object = value.objectValue else {
            throw LedgerError(.invalidInput, "\(name) is a JSON \(value.typeName), expected an object")
        }
        return object
    }

    /// The payload's `signedDate`: an integer count of milliseconds since 1970, years 1 to 9999.
    private static func signedDate(_ payload: JSONObject, _ field: String) throws -> Date? {
        guard let value = payload["signedDate"] else { return nil }
        guard let milliseconds = value.int64Value,
              let timestamp = Timestamp(checkedEpochMilliseconds: milliseconds)
        else {
            let found = value.numberValue.map { "the number \(excerpt($0))" } ?? "a \(value.typeName)"
            throw LedgerError(.invalidInput,
                              "\(field).signedDate: expected epoch milliseconds (an integer, years 1 to 9999), found \(found)")
        }
        return timestamp.date
    }

    /// At most 40 characters of untrusted text, for a message.
    static func excerpt(_ text: String) -> String {
        text.count <= 40 ? text : text.prefix(40) + "…"
    }
}
