import ArgumentParser
import Foundation
import Postgres
import PurchaseLedger

/// `ledger analytics ...`: reports over the projections, as the views in schema `analytics` give them.
struct Analytics: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Revenue, subscribers, churn, refunds and the unconsumed backlog, from the analytics views.",
        discussion: """
            Periods are UTC days or months; --from is inclusive, --to exclusive (YYYY-MM-DD). \
            Sandbox payments are left out unless --include-sandbox. Money is summed per currency \
            and printed exactly, never converted. The same figures are in schema analytics for SQL.
            """,
        subcommands: [Revenue.self, Subscribers.self, Churn.self, Refunds.self, Backlog.self])
}

extension AnalyticsPeriod: ExpressibleByArgument {}

/// How a report is printed.
enum AnalyticsFormat: String, ExpressibleByArgument, CaseIterable {
    case table, csv, json
}

/// The date range, period, stores and sandbox switch of a report.
struct AnalyticsRangeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The first UTC day, inclusive.", valueName: "YYYY-MM-DD"))
    var from: String

    @Option(help: ArgumentHelp("The UTC day after the last, exclusive.", valueName: "YYYY-MM-DD"))
    var to: String

    @Option(help: "The period of each row: day or month.")
    var by: AnalyticsPeriod = .day

    @Option(name: .customLong("store"), help: "Only this store (AS or GG); repeat for several.")
    var stores: [StoreCode] = []

    @Flag(help: "Count sandbox payments too.")
    var includeSandbox = false

    func validate() throws {
        guard let from = CalendarDay(from) else { throw ValidationError("--from: expected a day as YYYY-MM-DD, got '\(self.from)'") }
        guard let to = CalendarDay(to) else { throw ValidationError("--to: expected a day as YYYY-MM-DD, got '\(self.to)'") }
        guard from < to else { throw ValidationError("--to (\(to)) must be later than --from (\(from)): --to is exclusive") }
    }

    var query: AnalyticsQuery {
        AnalyticsQuery(from: CalendarDay(from)!, to: CalendarDay(to)!, by: by, stores: Set(stores),
                       includeSandbox: includeSandbox)
    }
}

/// `--format table|csv|json`, and `--json` as every query command takes it (CONTRACT.md §3).
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

extension StoreCode {
    /// The store's code and name, for legends.
    var legendName: String { "\(rawValue) (\(self == .appStore ? "App Store" : "Google Play"))" }

    /// A fixed colour per store (Okabe-Ito: readable for colour-blind people too).
    var chartColor: String { self == .appStore ? "#0072B2" : "#D55E00" }
}
