import Foundation

/// One figure of the benchmark: the ledger's value, the same server's baseline measured in the
/// same run, their ratio, and the target the ratio (or value) must reach.
struct Figure: Sendable {
    enum Goal: Sendable {
        /// ratio ≥ this.
        case ratioAtLeast(Double)
        /// ratio ≤ this.
        case ratioAtMost(Double)
        /// value ≤ this (seconds, megabytes...).
        case valueAtMost(Double)
        /// Shown for reference: no target.
        case reference
    }

    var path: String
    var name: String
    var unit: String
    var value: Double
    var baselineName: String?
    var baseline: Double?
    var goal: Goal

    var ratio: Double? {
        guard let baseline, baseline > 0 else { return nil }
        return value / baseline
    }

    var met: Bool {
        switch goal {
        case .ratioAtLeast(let x): (ratio ?? 0) >= x
        case .ratioAtMost(let x): (ratio ?? .infinity) <= x
        case .valueAtMost(let x): value <= x
        case .reference: true
        }
    }

    var target: String {
        switch goal {
        case .ratioAtLeast(let x): "≥ \(Measure.format(x))×"
        case .ratioAtMost(let x): "≤ \(Measure.format(x))×"
        case .valueAtMost(let x): "≤ \(Measure.format(x)) \(unit)"
        case .reference: "-"
        }
    }
}

enum Measure {
    /// The median of several runs' values.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The q-quantile (0...1) of latencies.
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
    }

    /// Seconds that `body` took.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    static func format(_ x: Double) -> String {
        guard x.isFinite else { return "-" }
        if x == 0 { return "0" }
        if abs(x) >= 100 { return String(Int(x.rounded())) }
        if abs(x) >= 10 { return String(format: "%.1f", x) }
        if abs(x) >= 1 { return String(format: "%.2f", x) }
        return String(format: "%.3f", x)
    }
}
