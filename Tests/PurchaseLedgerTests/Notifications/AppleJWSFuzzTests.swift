import LedgerDemo
import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

/// Hostile input for the verifier: whatever arrives, it refuses with INVALID_INPUT or
/// SIGNATURE_INVALID (its message starting with the field), never crashes, never accepts, and
/// the `Verifier`-based path agrees. The mutations come from a seeded SplitMix64, so a failing
/// case recurs with the same seed; the chain's keys (and ECDSA's nonces) are fresh each run, and
/// a failure prints the whole input.
@Suite("Apple signed data: hostile input")
struct AppleJWSFuzzTests {
    static let cases = 4_000
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    @Test func fourThousandHostileInputsAreAllRefusedWithAContractCode() async throws {
        let chain = TestAppleChain()
        let valid = [
            chain.sign(AppleJWSCheck.payload()),
            chain.signNested(#"{"signedDate":1767225600000,"data":{"signedTransactionInfo":{"$jws":{"price":990}}}}"#),
        ]
        var random = SplitMix64(seed: 0x4A57_F022)
        var kinds: [String: Int] = [:]
        for index in 0..<Self.cases {
            let (kind, input) = Self.hostile(index, valid: valid, chain: chain, &random)
            kinds[kind, default: 0] += 1
            let outcome = await AppleJWSCheck.outcome(input, roots: chain.roots)
            guard case .refused(let code, let message) = outcome,
                  code == .invalidInput || code == .signatureInvalid, message.hasPrefix("signedPayload")
            else {
                Issue.record("case \(index) (\(kind)) gave \(outcome) for input \(input.prefix(2_000).debugDescription)")
                continue
            }
        }
        #expect(kinds.count == 9, "\(kinds)")
    }

    /// The `index`th hostile input and the name of its kind.
    static func hostile(_ index: Int, valid: [String], chain: TestAppleChain,
                        _ random: inout SplitMix64) -> (String, String) {
        let base = Array(valid[Int(random.next() % UInt64(valid.count))].utf8)
        switch index % 9 {
        case 0:
            let bytes = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return ("random bytes", String(decoding: bytes, as: UTF8.self))
        case 1:
            let symbols = (0..<Int(random.next() % 80)).map { _ in
                random.next() % 4 == 0 ? UInt8(ascii: ".") : alphabet[Int(random.next() % 64)]
            }
            return ("random dots", String(decoding: symbols, as: UTF8.self))
        case 2:
            let cut = Int(random.next() % UInt64(base.count))
            return ("truncated", String(decoding: base[..<cut], as: UTF8.self))
        case 3:
            var bytes = base
            let position = Int(random.next() % UInt64(bytes.count))
            bytes[position] ^= UInt8(1) << UInt8(random.next() % 8)
            return ("bit flipped", String(decoding: bytes, as: UTF8.self))
        case 4:
            var bytes = base
            for _ in 0..<(1 + Int(random.next() % 5)) {
                let position = Int(random.next() % UInt64(bytes.count))
                let replacement = alphabet[Int(random.next() % 64)]
                bytes[position] = bytes[position] == replacement ? UInt8(ascii: "A") + UInt8(ascii: "B") - replacement : replacement
            }
            return ("characters replaced", String(decoding: bytes, as: UTF8.self))
        case 5:
            var parts = AppleJWSCheck.parts(String(decoding: base, as: UTF8.self))
            let size = index % 450 == 5 ? 1_000_000 : Int(random.next() % 20_000)
            parts[Int(random.next() % 3)] = String(decoding: (0..<size).map { _ in alphabet[Int(random.next() % 64)] }, as: UTF8.self)
            return ("huge base64", parts.joined(separator: "."))
        case 6:
            let depth = 50 + Int(random.next() % 3_000)
            let nested = random.next() % 2 == 0
                ? String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                : String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
            let inPayload = random.next() % 2 == 0
            return ("deeply nested", inPayload ? chain.sign(nested) : chain.sign(AppleJWSCheck.payload(), header: nested))
        case 7:
            let header = randomHeader(chain, &random)
            return ("hostile header", chain.sign(AppleJWSCheck.payload(), header: header))
        default:
            let first = AppleJWSCheck.parts(valid[0]), second = AppleJWSCheck.parts(valid[1])
            let mixed = [[first[0], second[1], first[2]], [first[0], first[1], second[2]], [second[0], first[1], second[2]]]
            return ("parts swapped", mixed[Int(random.next() % 3)].joined(separator: "."))
        }
    }

    /// A header whose `alg` or `x5c` is wrong in a random way.
    static func randomHeader(_ chain: TestAppleChain, _ random: inout SplitMix64) -> String {
        let algs = ["none", "HS256", "RS256", "ES256K", "EdDSA", "es256", "ES256 ", "ES256\u{0}"]
        var x5c = chain.x5c
        switch random.next() % 5 {
        case 0:
            return chain.header(alg: algs[Int(random.next() % UInt64(algs.count))])
        case 1:
            x5c.shuffle(using: &random)
            if x5c == chain.x5c { x5c.swapAt(0, 1) }
            return chain.header(x5c: x5c)
        case 2:
            x5c = Array(x5c.prefix(Int(random.next() % 3)))
            return chain.header(x5c: x5c)
        case 3:
            // x5c[2] is never read for trust, so a still-parsing flip there would rightly verify.
            let index = Int(random.next() % 2)
            var der = Array(Data(base64Encoded: x5c[index])!)
            der[Int(random.next() % UInt64(der.count))] ^= UInt8(1) << UInt8(random.next() % 8)
            x5c[index] = Data(der).base64EncodedString()
            return chain.header(x5c: x5c)
        default:
            return #"{"alg":"ES256","x5c":[\#(random.next() % 2 == 0 ? "null" : "{}"),"\#(x5c[1])","\#(x5c[2])"]}"#
        }
    }
}
