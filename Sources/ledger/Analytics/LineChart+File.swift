import Foundation
import LedgerOutput

extension LineChart {
    /// Writes the chart as an SVG file (`--plot`); a path that cannot be written is a usage error
    /// (exit 2).
    func write(to path: String) throws {
        do {
            try Data(svg().utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw ChartError(description: "cannot write the chart to \(path): \(error.localizedDescription)")
        }
    }
}
