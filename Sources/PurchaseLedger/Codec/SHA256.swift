/// SHA-256 (FIPS 180-4) in pure Swift, for digesting purchase tokens.
///
/// ```swift
/// let digest = SHA256.hash("tok-1".utf8)   // 32 bytes
/// SHA256.hex(digest)                       // "4b1c…" (64 lowercase hex digits)
/// ```
public enum SHA256 {
    /// The length of a digest in bytes.
    public static let digestByteCount = 32

    /// The SHA-256 digest of `bytes`: 32 bytes.
    ///
    /// Contiguous collections (`[UInt8]`, `ArraySlice`, `Data`, a native
    /// `String`'s `utf8`) are read in place; others are copied first.
    public static func hash<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { hash($0) }
    }

    /// The digest as 64 lowercase hexadecimal digits (or two per byte of any input).
    public static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(digest.count * 2)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `a` and `b` hold the same bytes, taking the same time whatever
    /// the position of the first difference (only the lengths are compared
    /// early), so comparing token digests leaks nothing through timing.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices {
            difference |= a[index] ^ b[index]
        }
        return difference == 0
    }

    // MARK: The algorithm

    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The eight working words, starting from the FIPS 180-4 initial hash value.
    private struct State {
        var h0: UInt32 = 0x6a09e667, h1: UInt32 = 0xbb67ae85, h2: UInt32 = 0x3c6ef372, h3: UInt32 = 0xa54ff53a
        var h4: UInt32 = 0x510e527f, h5: UInt32 = 0x9b05688c, h6: UInt32 = 0x1f83d9ab, h7: UInt32 = 0x5be0cd19

        var digest: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(SHA256.digestByteCount)
            for word in [h0, h1, h2, h3, h4, h5, h6, h7] {
                out.append(UInt8(truncatingIfNeeded: word >> 24))
                out.append(UInt8(truncatingIfNeeded: word >> 16))
                out.append(UInt8(truncatingIfNeeded: word >> 8))
                out.append(UInt8(truncatingIfNeeded: word))
            }
            return out
        }
    }

    private static func hash(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        var state = State()
        roundConstants.withUnsafeBufferPointer { k in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
                let fullBlocks = input.count / 64
                if let base = input.baseAddress {
                    for block in 0..<fullBlocks {
                        compress(&state, block: base + block * 64, k: k, w: schedule)
                    }
                }
                // Padding: the rest of the input, 0x80, zeros, then the bit length
                // as a big-endian UInt64 at the end of the last block.
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
                    tail.initialize(repeating: 0)
                    let rest = input.count - fullBlocks * 64
                    for index in 0..<rest {
                        tail[index] = input[fullBlocks * 64 + index]
                    }
                    tail[rest] = 0x80
                    let tailLength = rest < 56 ? 64 : 128
                    let bitLength = UInt64(input.count) &* 8
                    for index in 0..<8 {
                        tail[tailLength - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index)))
                    }
                    let tailBase = UnsafeRawPointer(tail.baseAddress!)
                    compress(&state, block: tailBase, k: k, w: schedule)
                    if tailLength == 128 {
                        compress(&state, block: tailBase + 64, k: k, w: schedule)
                    }
                }
            }
        }
        return state.digest
    }

    @inline(__always)
    private static func rotateRight(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x &>> n) | (x &<< (32 &- n))
    }

    /// Processes one 64-byte block into `state`.
    private static func compress(
        _ state: inout State,
        block: UnsafeRawPointer,
        k: UnsafeBufferPointer<UInt32>,
        w: UnsafeMutableBufferPointer<UInt32>
    ) {
        for t in 0..<16 {
            w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t * 4, as: UInt32.self))
        }
        for t in 16..<64 {
            let s0 = rotateRight(w[t - 15], 7) ^ rotateRight(w[t - 15], 18) ^ (w[t - 15] &>> 3)
            let s1 = rotateRight(w[t - 2], 17) ^ rotateRight(w[t - 2], 19) ^ (w[t - 2] &>> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var a = state.h0, b = state.h1, c = state.h2, d = state.h3
        var e = state.h4, f = state.h5, g = state.h6, h = state.h7
        for t in 0..<64 {
            let sigma1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
            let choice = (e & f) ^ (~e & g)
            let temp1 = h &+ sigma1 &+ choice &+ k[t] &+ w[t]
            let sigma0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let temp2 = sigma0 &+ majority
            h = g
            g = f
            f = e
            e = d &+ temp1
            d = c
            c = b
            b = a
            a = temp1 &+ temp2
        }
        state.h0 &+= a
        state.h1 &+= b
        state.h2 &+= c
        state.h3 &+= d
        state.h4 &+= e
        state.h5 &+= f
        state.h6 &+= g
        state.h7 &+= h
    }
}
