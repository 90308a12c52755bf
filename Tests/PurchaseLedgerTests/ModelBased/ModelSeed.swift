import Foundation
import LedgerDemo

/// The seeds the model-based tests run with: fixed ones, so CI is deterministic, or those in
/// `LEDGER_MODEL_SEED` (comma-separated, decimal or `0x` hex) to replay a failure or explore.
/// Every failure message names its seed.
enum ModelSeed {
    /// The fixed seeds.
    static let fixed: [UInt64] = [0x5EED_0001, 0x5EED_0002, 0x5EED_0003]

    /// `LEDGER_MODEL_SEED`'s seeds when it is set, else ``fixed``.
    static var seeds: [UInt64] {
        guard let text = ProcessInfo.processInfo.environment["LEDGER_MODEL_SEED"], !text.isEmpty else { return fixed }
        let parsed = text.split(separator: ",").compactMap { part -> UInt64? in
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            if trimmed.lowercased().hasPrefix("0x") { return UInt64(trimmed.dropFirst(2), radix: 16) }
            return UInt64(trimmed)
        }
        return parsed.isEmpty ? fixed : parsed
    }

    /// Commands per stream: `LEDGER_MODEL_COMMANDS`, else 300.
    static var streamLength: Int {
        ProcessInfo.processInfo.environment["LEDGER_MODEL_COMMANDS"].flatMap { Int($0) }.map { max(1, $0) } ?? 300
    }

    /// The seed as the failure messages print it (and `LEDGER_MODEL_SEED` takes it back).
    static func text(_ seed: UInt64) -> String { "0x" + String(seed, radix: 16, uppercase: true) }
}

/// Draws from a `SplitMix64`: the small helpers the generator needs, all deterministic.
struct StreamRandom {
    private var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    /// An integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &generator) < p }

    /// One element of a non-empty array; nil for an empty one.
    mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[int(0...(items.count - 1))]
    }

    /// An index chosen with the given weights (each ≥ 0, at least one > 0).
    mutating func weighted(_ weights: [Int]) -> Int {
        var draw = int(0...(weights.reduce(0, +) - 1))
        for (index, weight) in weights.enumerated() {
            if draw < weight { return index }
            draw -= weight
        }
        return weights.count - 1
    }
}
