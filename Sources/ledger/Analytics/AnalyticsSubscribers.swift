import ArgumentParser
import Foundation
import PurchaseLedger

extension Analytics {
    struct Subscribers: ParsableCommand {
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

        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let connection = try database.connect()
            defer { connection.close() }
            let query = range.query
            let rows = try connection.subscribers(query)
            output.print(AnalyticsReport(rows), empty: "no active subscriptions from \(query.from) to \(query.to)")
            if let plot {
                let chart = AnalyticsChart.subscribers(rows, periods: try connection.periods(query), query: query)
                try AnalyticsChart.write(chart, to: plot)
            }
        }
    }
}
