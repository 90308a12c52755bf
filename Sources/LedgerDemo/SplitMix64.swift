/// A small, fast, seeded random number generator (SplitMix64), so that the demo data is the
/// same for the same seed on every machine.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool {
        Double(next() >> 11) / Double(1 << 53) < p
    }

    /// An element of `items`, weighted.
    mutating func pick<T>(_ items: [(T, Double)]) -> T {
        let total = items.reduce(0) { $0 + $1.1 }
        var x = Double(next() >> 11) / Double(1 << 53) * total
        for (item, weight) in items {
            if x < weight { return item }
            x -= weight
        }
        return items[items.count - 1].0
    }
}
