import ArgumentParser
import PurchaseLedger

/// What `ledger rebuild` and `ledger verify` replay, in what steps, and whether they show it.
struct ReplayOptions: ParsableArguments {
    @Option(help: "The projections: ledger (payments, lineages, auto_renew_changes, restores and the stores' tables), or all.")
    var projection = "all"

    @Option(help: "Events per replay statement.")
    var batchSize = 250_000

    @Flag(help: "Print no progress.")
    var quiet = false

    func validate() throws {
        do { _ = try ProjectionSet.named(projection) } catch { throw ValidationError("\(error)") }
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
    }

    /// The sets `--projection` names.
    var projections: [ProjectionSet] {
        get throws { try ProjectionSet.named(projection) }
    }
}
