import Foundation
import LedgerJSON

/// A compact JWS whose signature and certificate chain ``AppleSignedDataVerifier`` verified:
/// its decoded header and payload.
public struct VerifiedJWS: Sendable {
    /// The protected header (`alg`, `x5c`, ...), as sent.
    public var header: JSONObject
    /// The payload, with numbers kept exactly as written.
    public var payload: JSONObject
    /// The payload's `signedDate` (epoch milliseconds) when it has one: the instant the
    /// certificates were checked at.
    public var signedDate: Date?

    /// A value with the given parts. ``AppleSignedDataVerifier/verify(_:field:)`` is the way to
    /// get one from a JWS; this is for tests and for callers that re-read data they verified.
    public init(header: JSONObject, payload: JSONObject, signedDate: Date?) {
        self.header = header
        self.payload = payload
        self.signedDate = signedDate
    }
}
