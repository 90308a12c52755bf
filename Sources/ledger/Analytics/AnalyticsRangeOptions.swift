import ArgumentParser
import PurchaseLedger

/// The date range, period, stores and sandbox switch of a report.
struct AnalyticsRangeOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The first UTC day, inclusive.", valueName: "YYYY-MM-DD"))
    var from: String

    @Option(help: ArgumentHelp("The UTC day after the last, exclusive.", valueName: "YYYY-MM-DD"))
    var to: String

    @Option(help: "The period of each row: day or month.")
    var by: AnalyticsPeriod = .day

    @OptionGroup var stores: StoreFilterOptions

    @Flag(help: "Count sandbox payments too.")
    var includeSandbox = false

    func validate() throws {
        guard let from = CalendarDay(from) else { throw ValidationError("--from: expected a day as YYYY-MM-DD, got '\(self.from)'") }
        guard let to = CalendarDay(to) else { throw ValidationError("--to: expected a day as YYYY-MM-DD, got '\(self.to)'") }
        guard from < to else { throw ValidationError("--to (\(to)) must be later than --from (\(from)): --to is exclusive") }
        if let refusal = AnalyticsLimits.refusal(query) { throw ValidationError("--\(refusal.field): \(refusal.problem)") }
    }

    var query: AnalyticsQuery {
        AnalyticsQuery(from: CalendarDay(from)!, to: CalendarDay(to)!, by: by, stores: stores.set,
                       includeSandbox: includeSandbox)
    }
}
