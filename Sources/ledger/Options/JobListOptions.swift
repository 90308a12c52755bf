import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger

/// The options of the commands that list jobs (`ledger jobs list`, `ledger webhooks
/// deliveries`): a state, a count and JSON, and the JSON array both print.
struct JobListOptions: ParsableArguments {
    @Option(help: "Only those in this state: pending, failed, done or waiting.")
    var state: String?

    @Option(help: "At most this many.")
    var limit: Int = 100

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if let state, JobRecord.State(rawValue: state) == nil {
            throw ValidationError("--state: expected pending, failed, done or waiting, got \(state)")
        }
    }

    /// The state asked for (nil: every state).
    var selected: JobRecord.State? { state.flatMap(JobRecord.State.init) }

    /// Prints `jobs` as a JSON array.
    func printJSON(_ jobs: [JobRecord]) {
        var w = JSONWriter()
        w.beginArray()
        for job in jobs { job.write(into: &w) }
        w.endArray()
        print(w.string)
    }
}
