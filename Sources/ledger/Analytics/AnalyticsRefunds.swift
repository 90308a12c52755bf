import ArgumentParser
import LedgerOutput
import PurchaseLedger

extension Analytics {
    struct Refunds: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refunds per period (by refund time), store and currency; those after consume apart.",
            discussion: """
                refundsAfterConsume and amountAfterConsume count the refunded payments that had been \
                consumed at or before the refund: goods handed out, then the money taken back.
                """)

        @OptionGroup var range: AnalyticsRangeOptions
        @OptionGroup var output: AnalyticsOutputOptions
        @OptionGroup var runner: AnalyticsRunOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let query = range.query
            let rows = try await runner.withLedger(database) { try await $0.refunds(query) }
            output.print(AnalyticsReport(rows), empty: "no refunds from \(query.from) to \(query.to)")
        }
    }
}
