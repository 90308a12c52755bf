import PurchaseLedger
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    @Test(
        "NIST FIPS 180-4 example messages give their published digests",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ]
    )
    func nistVectors(message: String, expected: String) {
        #expect(SHA256.hex(SHA256.hash(message.utf8)) == expected)
    }

    @Test("one million 'a' gives the NIST digest")
    func oneMillionA() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hex(SHA256.hash(message)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Digests computed once with Python's `hashlib.sha256` over
    /// `pseudoRandomBytes(count: length, seed: length)`; the lengths straddle
    /// the padding boundaries (55/56, 63/64, 119/120, 127/128).
    @Test(
        "pseudo-random inputs give the same digest as Python's hashlib",
        arguments: [
            (0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (1, "acac86c0e609ca906f632b0e2dacccb2b77d22b0621f20ebece1a4835b93f6f0"),
            (2, "a4daf664b7466a92511cc8441383f63bf0bae10c32af07fa7af70f3e9d3e5e36"),
            (3, "b10707192c9682771b90548d2da1c06286073c882c57406edccffa341a4090e0"),
            (31, "53633f675dab0eed799b5214e35c321620ea0deb4097d7a872f9990ee15b6901"),
            (32, "903805a0b0cb92608f929ea579b5d90a824873a3eaf63e1dd663d99ebe0403d8"),
            (33, "178e19a241d296976f3539cdfe892fdfb2f6492d5914b7d38cb812b5171b1800"),
            (55, "2c2bc644d674041ad458ca4b8e798e82580b789b60275c66edd5dd97b006de3d"),
            (56, "176ff635dcfe59cab1aa43b138f7fd6881ef2582706d44ceac2d11eab733192e"),
            (57, "b88deb4568619ec14f2a65da1226088e2ab2d481801dc5651a9cc7c588887700"),
            (63, "b83e3aae5c5ab2f4e94fd7ff2cd0c6411f93136f4bb150d40f63e0016a8c7c76"),
            (64, "4c108cb98eb7aa3b35c6befdbb9c4255e965e12b485042b81abf95f043914740"),
            (65, "49cd3d141f2aa86b2b078ac6b6276f0c76c4606d0caa504ae6a5c36919bedf6f"),
            (111, "f7665b62aef5c760acab0dffb5de548649c18a610bf30201ddcf07193b5aa6f4"),
            (119, "1cb1151f5be63cefc898408d7bc0fde3b09f0d33311c35fe8ca7a4b6eb4ffb68"),
            (120, "02498029296489fee53770a3e6e2961256d8101a083d7342ff3bddad280b307c"),
            (127, "b5e024815e2715b8962632f0dfbfc5f95048ed5d5c3e18d8e7172db4cf19b8cb"),
            (128, "7ca3bb28656a5bb964fe717ffb63f8f852ff1efaedb452b36ebbdd2c4dddc38f"),
            (129, "046c77530471b20049dabfd99abd142ae1eef74d54c13d158797bead497fe215"),
            (200, "ac8e4e0409913b88e6ee2188685371d1917feb4465ae28bdd3b7b477bf923267"),
            (255, "1ae1ac6fc6c44840876ea1facab0057447a87120257e801b262357707ff224b6"),
            (300, "d204073b2de869126cdef73ec54989f969160497223cfc1c9d0d57a7f785e22a"),
        ]
    )
    func matchesPythonHashlib(length: Int, expected: String) {
        let input = Self.pseudoRandomBytes(count: length, seed: UInt64(length))
        #expect(SHA256.hex(SHA256.hash(input)) == expected)
    }

    @Test("contiguous and non-contiguous collections of the same bytes give the same digest")
    func collectionKindsAgree() {
        let bytes = Self.pseudoRandomBytes(count: 200, seed: 200)
        let expected = SHA256.hash(bytes)
        #expect(SHA256.hash(bytes[...]) == expected)
        #expect(SHA256.hash(bytes.lazy.map { $0 }) == expected)
        #expect(SHA256.hash(Set([UInt8(1)])) == SHA256.hash([UInt8(1)]))
        #expect(expected.count == SHA256.digestByteCount)
    }

    @Test("hex is lowercase, two digits per byte, zeros kept")
    func hexFormatting() {
        #expect(SHA256.hex([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
        #expect(SHA256.hex([]) == "")
    }

    @Test("constant-time comparison is true only for identical bytes of the same length")
    func constantTimeEquality() {
        let digest = SHA256.hash("tok-1".utf8)
        #expect(SHA256.constantTimeEquals(digest, SHA256.hash("tok-1".utf8)))
        #expect(!SHA256.constantTimeEquals(digest, SHA256.hash("tok-2".utf8)))
        var lastByteDiffers = digest
        lastByteDiffers[31] ^= 0x01
        #expect(!SHA256.constantTimeEquals(digest, lastByteDiffers))
        #expect(!SHA256.constantTimeEquals(digest, Array(digest.dropLast())))
        #expect(SHA256.constantTimeEquals([], []))
    }

    /// A 64-bit LCG (Knuth's MMIX constants) taking the top byte of each
    /// state; the Python that produced the table above does the same.
    static func pseudoRandomBytes(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }
}
