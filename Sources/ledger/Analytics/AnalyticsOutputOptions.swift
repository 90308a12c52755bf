import ArgumentParser
import Foundation
import LedgerOutput
import PurchaseLedger

/// `--format table|csv|json`, and `--json` as every query command takes it (docs/contract.md §3).
struct AnalyticsOutputOptions: ParsableArguments {
    @Option(help: "table (for people), csv (RFC 4180) or json (an array of objects).")
    var format: AnalyticsFormat?

    @Flag(help: "The same as --format json.")
    var json = false

    func validate() throws {
        if json, let format, format != .json {
            throw ValidationError("--json and --format \(format.rawValue) disagree: give one of them")
        }
    }

    var resolved: AnalyticsFormat { json ? .json : format ?? .table }

    /// Prints the report in the chosen format; `tableCells` may show cells differently for people.
    func print(_ report: AnalyticsReport, empty: String, tableHeader: [String]? = nil,
               tableCells: ([AnalyticsValue]) -> [String] = { $0.map(\.text) }) {
        switch resolved {
        case .json: Swift.print(report.json)
        case .csv: FileHandle.standardOutput.write(Data(report.csv.utf8))
        case .table: Swift.print(Table(tableHeader ?? report.columns, report.rows.map(tableCells)).render(empty: empty))
        }
    }
}
