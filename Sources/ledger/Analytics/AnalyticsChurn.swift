import ArgumentParser
import LedgerOutput
import PurchaseLedger

extension Analytics {
    struct Churn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Subscription starts, renewals and churn per period, store and product.",
            discussion: """
                A lineage churns when its access ends (expiry, or a refund cutting it short) with no \
                payment extending it, counted once that moment has passed: voluntary when auto-renew \
                was off then, involuntary when it was on, revoked when a refund ended it.
                """)

        @OptionGroup var range: AnalyticsRangeOptions
        @OptionGroup var output: AnalyticsOutputOptions
        @OptionGroup var runner: AnalyticsRunOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let query = range.query
            let rows = try await runner.withLedger(database) { try await $0.churn(query) }
            output.print(AnalyticsReport(rows),
                         empty: "no subscription activity from \(query.from) to \(query.to)")
        }
    }
}
