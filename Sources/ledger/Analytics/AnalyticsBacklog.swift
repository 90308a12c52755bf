import ArgumentParser
import Foundation
import LedgerOutput
import PurchaseLedger

extension Analytics {
    struct Backlog: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Goods paid for but not handed out, per store and product, with their age.",
            discussion: """
                Consumable payments purchased by --at and neither consumed nor refunded by then: how \
                many, the oldest purchase time, and the median and 95th-percentile age in seconds.
                """)

        @Option(help: "The instant: ISO-8601 with a zone, e.g. 2026-01-15T00:00:00Z (default: now).")
        var at: Instant?

        @OptionGroup var stores: StoreFilterOptions

        @Flag(help: "Count sandbox payments too.")
        var includeSandbox = false

        @OptionGroup var output: AnalyticsOutputOptions
        @OptionGroup var runner: AnalyticsRunOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let instant = at?.date ?? Date()
            let (stores, includeSandbox) = (stores.set, includeSandbox)
            let rows = try await runner.withLedger(database) {
                try await $0.backlog(at: instant, stores: stores, includeSandbox: includeSandbox)
            }
            let header = ["storeCode", "productId", "unconsumed", "oldestPurchaseTime", "medianAge", "p95Age"]
            output.print(AnalyticsReport(rows), empty: "no unconsumed payments at \(instant.ledgerText)",
                         tableHeader: header) { cells in
                // People read ages as days and hours; programs get seconds.
                cells.enumerated().map { index, cell in
                    if index >= 4, case .count(let seconds) = cell { return Self.age(seconds) }
                    return cell.text
                }
            }
        }

        /// `12d 03:04:05`.
        static func age(_ seconds: Int) -> String {
            let (days, rest) = seconds.quotientAndRemainder(dividingBy: 86_400)
            let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
            return "\(days)d \(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60))"
        }
    }
}
