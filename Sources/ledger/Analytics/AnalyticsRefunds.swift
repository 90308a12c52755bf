import ArgumentParser
import PurchaseLedger

extension Analytics {
    struct Refunds: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refunds per period (by refund time), store and currency; those after consume apart.",
            discussion: """
                refundsAfterConsume and amountAfterConsume count the refunded payments that had been \
                consumed at or before the refund: goods handed out, then the money taken back.
                """)

        @OptionGroup var range: AnalyticsRangeOptions
        @OptionGroup var output: AnalyticsOutputOptions
        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let connection = try database.connect()
            defer { connection.close() }
            let query = range.query
            output.print(AnalyticsReport(try connection.refunds(query)), empty: "no refunds from \(query.from) to \(query.to)")
        }
    }
}
