import ArgumentParser
import Foundation
import PurchaseLedger

struct Rebuild: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay the event log into fresh projection tables and swap them in atomically.",
        discussion: """
            Appends and queries keep working meanwhile; events appended during the rebuild are in \
            the result (the last ones are applied under a short lock, together with the swap). \
            Killed at any moment, it leaves the live projections untouched: run it again and it \
            starts over. Run it as the role that ran `ledger migrate`.
            """)

    @OptionGroup var replay: ReplayOptions

    @Option(help: "Seconds the swap may keep trying to take its short locks before giving up.")
    var swapTimeout = 60

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard swapTimeout >= 1 else { throw ValidationError("--swap-timeout must be at least 1") }
    }

    func run() throws {
        let connection = try database.connect()
        defer { connection.close() }
        var rebuilder = ProjectionRebuilder(connection: connection, projections: try replay.projections,
                                            batchSize: replay.batchSize)
        rebuilder.swapDeadline = TimeInterval(swapTimeout)
        rebuilder.logger = LedgerLog.logger
        var display = ReplayDisplay(enabled: !replay.quiet, verb: "rebuild")
        let summary: RebuildSummary
        do {
            summary = try rebuilder.rebuild { display.show($0) }
        } catch let error as RebuildError {
            display.stop()
            Terminal.fail("ledger: \(error)")
        }
        display.finish()
        let rate = summary.replaySeconds > 0 ? Int(Double(summary.replayed) / summary.replaySeconds) : summary.replayed
        print("rebuilt the projections from \(summary.events) events in \(Progress.duration(summary.seconds)): "
              + "\(summary.replayed) replayed at \(rate) events/s, \(summary.caughtUp) appended meanwhile "
              + "(\(summary.underLock) under the swap's lock)")
    }
}
