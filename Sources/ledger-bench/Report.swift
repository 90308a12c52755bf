import Foundation
import PurchaseLedger
import LedgerJSON

/// The benchmark's table for people and JSON for programs.
enum Report {
    static func table(_ figures: [Figure], events: Int, runs: Int) -> String {
        let header = ["path", "figure", "ledger", "baseline", "baseline value", "ratio", "target", "met"]
        let rows = figures.map { f -> [String] in
            [f.path, f.name, Measure.format(f.value) + " " + f.unit, f.baselineName ?? "-",
             f.baseline.map { Measure.format($0) } ?? "-", f.ratio.map { Measure.format($0) + "×" } ?? "-",
             f.target, { if case .reference = f.goal { return "-" }; return f.met ? "yes" : "NO" }()]
        }
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { i, c in c + String(repeating: " ", count: widths[i] - c.count) }.joined(separator: " | ") + " |"
        }
        var out = ["ledger-bench: \(events) events, medians of \(runs) runs, \(ProcessInfo.processInfo.activeProcessorCount) cores",
                   "", line(header), "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"]
        out += rows.map(line)
        return out.joined(separator: "\n")
    }

    static func json(_ figures: [Figure], events: Int) -> String {
        var w = JSONWriter()
        w.beginArray()
        for f in figures {
            w.beginObject()
            w.field("path", f.path)
            w.field("figure", f.name)
            w.field("unit", f.unit)
            w.key("value"); w.rawNumber(number(f.value))
            w.field("baseline", f.baselineName)
            w.key("baselineValue"); if let b = f.baseline { w.rawNumber(number(b)) } else { w.null() }
            w.key("ratio"); if let r = f.ratio { w.rawNumber(number(r)) } else { w.null() }
            w.field("target", f.target)
            w.field("met", f.met)
            w.field("events", events)
            w.endObject()
        }
        w.endArray()
        return w.string
    }

    private static func number(_ x: Double) -> String {
        x.isFinite ? String(format: "%.6g", x) : "null"
    }
}

