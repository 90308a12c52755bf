import ArgumentParser
import PurchaseLedger

/// `ledger analytics ...`: reports over the projections, as the views in schema `analytics` give them.
struct Analytics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Revenue, subscribers, churn, refunds and the unconsumed backlog, from the analytics views.",
        discussion: """
            Periods are UTC days or months; --from is inclusive, --to exclusive (YYYY-MM-DD). \
            Sandbox payments are left out unless --include-sandbox. Money is summed per currency \
            and printed exactly, never converted. The same figures are in schema analytics for SQL. \
            A report covers at most \(AnalyticsLimits.maxDays) days by day or \(AnalyticsLimits.maxMonths) months \
            by month and \(AnalyticsLimits.maxRows) rows; --timeout (30 s) stops a longer one on the database, \
            and so does Ctrl-C.
            """,
        subcommands: [Revenue.self, Subscribers.self, Churn.self, Refunds.self, Backlog.self])
}
