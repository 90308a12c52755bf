import ArgumentParser
import Foundation
import PurchaseLedger

extension Analytics {
    struct Revenue: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Payments, gross, refunds and net per period, store and currency.",
            discussion: """
                payments and gross count the payments purchased in the period; refunds sums the prices \
                of the payments refunded in the period (by refund time); net = gross - refunds.
                """)

        @OptionGroup var range: AnalyticsRangeOptions
        @OptionGroup var output: AnalyticsOutputOptions

        @Option(help: ArgumentHelp("Also draw net revenue per store, one panel per currency, to this SVG file.", valueName: "file.svg"))
        var plot: String?

        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let connection = try database.connect()
            defer { connection.close() }
            let query = range.query
            let rows = try connection.revenue(query)
            output.print(AnalyticsReport(rows), empty: "no payments or refunds from \(query.from) to \(query.to)")
            if let plot {
                let chart = AnalyticsChart.revenue(rows, periods: try connection.periods(query), query: query)
                try AnalyticsChart.write(chart, to: plot)
            }
        }
    }
}
