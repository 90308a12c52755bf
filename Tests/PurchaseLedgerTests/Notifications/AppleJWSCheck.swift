import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing
import LedgerJSON

/// Runs a JWS through both ways of building the chain and expects the same outcome.
enum AppleJWSCheck {
    /// 2026-01-01T00:00:00Z in epoch milliseconds: inside the test chains' 2020-2045 window.
    static let signedDate: Int64 = 1_767_225_600_000

    /// What `verify` gave: the payload, or the refusal's code and message.
    enum Outcome: Equatable, CustomStringConvertible {
        case verified(JSONObject)
        case refused(LedgerError.Code, String)
        case otherError(String)

        var description: String {
            switch self {
            case .verified(let payload): return "verified \(payload.keys)"
            case .refused(let code, let message): return "\(code.rawValue): \(message)"
            case .otherError(let error): return "unexpected error \(error)"
            }
        }
    }

    /// The synchronous verifier's outcome, after checking that the `Verifier`-based one agrees.
    static func outcome(
        _ jws: String, roots: AppleRootCertificates, field: String = "signedPayload",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Outcome {
        let verifier = AppleSignedDataVerifier(roots: roots)
        let synchronous = capture { try verifier.verify(jws, field: field) }
        let library: Outcome
        do {
            library = .verified(try await verifier.verifyUsingX509Verifier(jws, field: field).payload)
        } catch let error as LedgerError {
            library = .refused(error.code, error.message)
        } catch {
            library = .otherError("\(error)")
        }
        #expect(withoutNow(synchronous) == withoutNow(library), "the two chain builders disagree",
                sourceLocation: sourceLocation)
        return synchronous
    }

    /// `outcome` with the instant of "not valid now, <instant>" left out: the two runs read the
    /// clock at different microseconds.
    static func withoutNow(_ outcome: Outcome) -> Outcome {
        guard case .refused(let code, let message) = outcome, let now = message.range(of: "not valid now, ") else {
            return outcome
        }
        let instant = message[now.upperBound...].prefix(while: { $0 != " " })
        return .refused(code, message.replacingOccurrences(of: String(instant), with: "<now>"))
    }

    /// The outcome of `body`.
    static func capture(_ body: () throws -> VerifiedJWS) -> Outcome {
        do {
            return .verified(try body().payload)
        } catch let error as LedgerError {
            return .refused(error.code, error.message)
        } catch {
            return .otherError("\(error)")
        }
    }

    /// Expects a refusal with `code` whose message starts with `field` and contains `words`.
    static func expectRefused(
        _ jws: String, roots: AppleRootCertificates, _ code: LedgerError.Code, _ words: String,
        field: String = "signedPayload", sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let result = await outcome(jws, roots: roots, field: field, sourceLocation: sourceLocation)
        guard case .refused(let got, let message) = result else {
            Issue.record("expected \(code.rawValue) saying \"\(words)\", got \(result)", sourceLocation: sourceLocation)
            return
        }
        #expect(got == code, "\(message)", sourceLocation: sourceLocation)
        #expect(message.hasPrefix(field), "\(message)", sourceLocation: sourceLocation)
        #expect(message.contains(words), "\(message)", sourceLocation: sourceLocation)
    }

    /// A payload with the given `signedDate` (epoch ms) and nothing else of note.
    static func payload(signedDate: Int64 = signedDate) -> String {
        #"{"notificationType":"TEST","notificationUUID":"u-1","signedDate":\#(signedDate)}"#
    }

    /// The three parts of a compact JWS.
    static func parts(_ jws: String) -> [String] {
        jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// `/work/shared` beside the worktree: `shared/fixtures`, `shared/tools`.
    static let sharedDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared")
}
