import ArgumentParser
import Foundation
import LedgerOutput
import PurchaseLedger

extension Analytics {
    struct Subscribers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Active subscriptions at the end of each period, per store and product.",
            discussion: """
                active counts the lineages active (the rule of `ledger subscriptions`) at the period's \
                exclusive end: the first instant of the next period (or --to, for a period it cuts).
                """)

        @OptionGroup var range: AnalyticsRangeOptions
        @OptionGroup var output: AnalyticsOutputOptions

        @Option(help: ArgumentHelp("Also draw active subscriptions per store to this SVG file.", valueName: "file.svg"))
        var plot: String?

        @OptionGroup var runner: AnalyticsRunOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let query = range.query
            let charted = plot != nil
            let (rows, periods) = try await runner.withLedger(database) { ledger in
                (try await ledger.subscribers(query), charted ? try await ledger.periods(query) : [])
            }
            output.print(AnalyticsReport(rows), empty: "no active subscriptions from \(query.from) to \(query.to)")
            if let plot {
                try AnalyticsChart.subscribers(rows, periods: periods, query: query).write(to: plot)
            }
        }
    }
}
