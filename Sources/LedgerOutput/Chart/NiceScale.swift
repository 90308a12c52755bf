import Foundation

/// A y axis range with round tick values (1, 2 or 5 times a power of ten), about five ticks.
struct NiceScale {
    let lower: Double
    let upper: Double
    let step: Double

    init(min: Double, max: Double, ticks: Int = 5) {
        var (low, high) = (min, max)
        if high - low < 1e-9 { high = low + 1 }
        let rough = (high - low) / Double(ticks)
        let magnitude = pow(10, (log10(rough)).rounded(.down))
        let fraction = rough / magnitude
        let nice: Double = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10
        var step = nice * magnitude
        // Counts are whole numbers: no ticks between them.
        if low == low.rounded(), high == high.rounded(), step < 1 { step = 1 }
        self.step = step
        lower = (low / step).rounded(.down) * step
        upper = (high / step).rounded(.up) * step
    }

    var ticks: [Double] {
        let count = Int(((upper - lower) / step).rounded())
        return (0...count).map { lower + Double($0) * step }
    }

    /// A tick value with thousands separators and as many decimals as the step needs.
    func label(_ value: Double) -> String {
        let decimals = step >= 1 ? 0 : Int((-log10(step)).rounded(.up))
        let text = String(format: "%.\(decimals)f", locale: Locale(identifier: "en_US_POSIX"), abs(value))
        let parts = text.split(separator: ".", maxSplits: 1)
        var integer = String(parts[0])
        var grouped = ""
        while integer.count > 3 {
            grouped = "," + integer.suffix(3) + grouped
            integer.removeLast(3)
        }
        let sign = value < 0 && text.contains(where: { $0 != "0" && $0 != "." }) ? "−" : ""
        return sign + integer + grouped + (parts.count > 1 ? "." + parts[1] : "")
    }
}
