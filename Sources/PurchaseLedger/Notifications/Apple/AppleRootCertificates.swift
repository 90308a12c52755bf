import Crypto
import Foundation
import SwiftASN1
import X509

/// Trusted roots for Apple's signed data: the only certificates a JWS's chain may end in
/// (docs/contract.md §5.1 `LEDGER_APPLE_ROOT_CERTIFICATES`). The root a JWS carries in `x5c` is
/// never one of them by itself.
///
/// ```swift
/// let roots = try AppleRootCertificates.fromEnvironment(env["LEDGER_APPLE_ROOT_CERTIFICATES"])
/// roots.fingerprints   // ["63:34:3A:…:91:79"] when unset: Apple Root CA - G3
/// ```
public struct AppleRootCertificates: Sendable {
    /// The certificates, in the order given.
    let certificates: [Certificate]

    init(certificates: [Certificate]) {
        self.certificates = certificates
    }

    /// Parses one or more PEM certificates (each file may hold several, and text around them).
    ///
    /// - Throws: `LedgerError(.invalidInput, ...)` naming the file when it cannot be read, holds
    ///   no certificate, a block that is not a `CERTIFICATE`, or one that is not DER X.509; or
    ///   when `paths` is empty.
    public init(pemFiles paths: [String]) throws {
        guard !paths.isEmpty else {
            throw LedgerError(.invalidInput, "root certificates: no PEM file given")
        }
        var certificates: [Certificate] = []
        for path in paths {
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw LedgerError(.invalidInput, "\(path): cannot be read as UTF-8 text (\(error.localizedDescription))")
            }
            certificates += try Self.parse(text, source: path)
        }
        self.certificates = certificates
    }

    /// Parses one or more PEM certificates from `pem`.
    ///
    /// - Throws: `LedgerError(.invalidInput, ...)` when `pem` holds no certificate, a block that
    ///   is not a `CERTIFICATE`, or one that is not DER X.509.
    public init(pem: String) throws {
        self.certificates = try Self.parse(pem, source: "root certificate PEM")
    }

    /// The roots `LEDGER_APPLE_ROOT_CERTIFICATES` names: `:`-separated PEM files (empty entries
    /// skipped), or the built-in ``appleRootCAG3`` when `value` is unset or empty.
    ///
    /// - Throws: `LedgerError(.invalidInput, "LEDGER_APPLE_ROOT_CERTIFICATES: <file>: ...")`.
    public static func fromEnvironment(_ value: String?) throws -> AppleRootCertificates {
        let paths = (value ?? "").split(separator: ":", omittingEmptySubsequences: true).map(String.init)
        guard !paths.isEmpty else { return .appleRootCAG3 }
        do {
            return try AppleRootCertificates(pemFiles: paths)
        } catch let error as LedgerError {
            throw LedgerError(error.code, "LEDGER_APPLE_ROOT_CERTIFICATES: \(error.message)")
        }
    }

    /// SHA-256 fingerprints of the roots' DER, as uppercase hex pairs joined by `:`
    /// (`63:34:3A:…`, as `openssl x509 -fingerprint -sha256` prints them), for logs and tests.
    public var fingerprints: [String] {
        let digits = Array("0123456789ABCDEF")
        return derEncoded.map { der in
            SHA256.hash(data: der)
                .map { String([digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]]) }
                .joined(separator: ":")
        }
    }

    /// The DER encoding of each root, in the order given.
    public var derEncoded: [[UInt8]] {
        certificates.map { certificate in
            // A parsed certificate serializes back to the bytes it was parsed from; one this
            // type parsed always serializes.
            var serializer = DER.Serializer()
            try? serializer.serialize(certificate)
            return serializer.serializedBytes
        }
    }

    private static func parse(_ text: String, source: String) throws -> [Certificate] {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw LedgerError(.invalidInput, "\(source): not valid PEM (\(error))")
        }
        guard !documents.isEmpty else {
            throw LedgerError(.invalidInput, "\(source): holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return try documents.enumerated().map { index, document in
            guard document.discriminator == Certificate.defaultPEMDiscriminator else {
                throw LedgerError(.invalidInput,
                                  "\(source): PEM block \(index + 1) is a \(document.discriminator), not a CERTIFICATE")
            }
            do {
                return try Certificate(derEncoded: document.derBytes)
            } catch {
                throw LedgerError(.invalidInput, "\(source): PEM block \(index + 1) is not a DER X.509 certificate (\(error))")
            }
        }
    }
}
