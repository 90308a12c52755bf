import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

@Suite("Apple signed data: INVALID_INPUT for what is not a compact JWS of JSON")
struct AppleJWSMalformedInputTests {
    static let chain = TestAppleChain()
    static let good = AppleJWSCheck.parts(chain.sign(AppleJWSCheck.payload()))
    static func b64u(_ text: String) -> String { TestAppleChain.base64URL(Array(text.utf8)) }

    @Test(arguments: [
        ("", "signedPayload: not a compact JWS: expected 3 base64url parts separated by '.', found 1"),
        ("abc", "found 1"),
        ("\(good[0]).\(good[1])", "found 2"),
        ("\(good[0]).\(good[1]).\(good[2]).", "found more than 3"),
        ("\(good[0]).\(good[1]).\(good[2]).\(good[2])", "found more than 3"),
        ("....", "found more than 3"),
    ])
    func aCompactJWSHasExactlyThreeParts(jws: String, words: String) async {
        await AppleJWSCheck.expectRefused(jws, roots: Self.chain.roots, .invalidInput, words)
    }

    @Test(arguments: [
        ("\(good[0])=.\(good[1]).\(good[2])", "signedPayload: the header is not base64url"),
        ("+\(good[0]).\(good[1]).\(good[2])", "the header is not base64url"),
        (" \(good[0]).\(good[1]).\(good[2])", "the header is not base64url"),
        ("\(good[0]).\(good[1])==.\(good[2])", "signedPayload: the payload is not base64url"),
        ("\(good[0]).\(good[1]).\(good[2])=", "signedPayload: the signature is not base64url"),
        ("\(good[0]).\(good[1]).\(good[2])\n", "the signature is not base64url"),
        ("\(good[0]).\(good[1]).A", "the signature is not base64url"),
        ("\(good[0]).\(good[1]).AB", "the signature is not base64url"),  // non-zero unused bits: not canonical
        ("\(b64u("not json")).\(good[1]).\(good[2])", "signedPayload: the header is not JSON"),
        ("\(b64u("")).\(good[1]).\(good[2])", "the header is not JSON"),
        ("\(b64u("[1]")).\(good[1]).\(good[2])", "signedPayload: the header is a JSON array, expected an object"),
        ("\(good[0]).\(b64u("[1,2]")).\(good[2])", "signedPayload: the payload is a JSON array, expected an object"),
        ("\(good[0]).\(b64u("\"x\"")).\(good[2])", "the payload is a JSON string, expected an object"),
        ("\(good[0]).\(b64u("{\"a\":1")).\(good[2])", "the payload is not JSON"),
        ("\(good[0]).\(b64u("{\"signedDate\":\"2026-01-01\"}")).\(good[2])",
         "signedPayload.signedDate: expected epoch milliseconds (an integer, years 1 to 9999), found a string"),
        ("\(good[0]).\(b64u("{\"signedDate\":1.5e12}")).\(good[2])", "signedPayload.signedDate: expected epoch milliseconds"),
        ("\(good[0]).\(b64u("{\"signedDate\":999999999999999999}")).\(good[2])", "found the number 999999999999999999"),
    ])
    func partsThatAreNotBase64URLJSONObjectsAreInvalidInput(jws: String, words: String) async {
        await AppleJWSCheck.expectRefused(jws, roots: Self.chain.roots, .invalidInput, words)
    }

    @Test func decodingComesBeforeEveryCheckOfTheSignature() async {
        // alg none and no x5c, but the payload is not JSON: INVALID_INPUT, not SIGNATURE_INVALID.
        await AppleJWSCheck.expectRefused("\(Self.b64u(#"{"alg":"none"}"#)).\(Self.b64u("nope")).", roots: Self.chain.roots,
                                          .invalidInput, "the payload is not JSON")
    }

    @Test func nestingDeeperThanTheParserAllowsIsInvalidInput() async {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        await AppleJWSCheck.expectRefused("\(Self.good[0]).\(Self.b64u(deep)).\(Self.good[2])", roots: Self.chain.roots,
                                          .invalidInput, "the payload is not JSON")
    }
}
