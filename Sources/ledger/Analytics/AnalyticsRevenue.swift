import ArgumentParser
import Foundation
import LedgerOutput
import PurchaseLedger

extension Analytics {
    struct Revenue: AsyncParsableCommand {
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

        @OptionGroup var runner: AnalyticsRunOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let query = range.query
            let charted = plot != nil
            let (rows, periods) = try await runner.withLedger(database) { ledger in
                (try await ledger.revenue(query), charted ? try await ledger.periods(query) : [])
            }
            output.print(AnalyticsReport(rows), empty: "no payments or refunds from \(query.from) to \(query.to)")
            if let plot {
                try AnalyticsChart.revenue(rows, periods: periods, query: query).write(to: plot)
            }
        }
    }
}
