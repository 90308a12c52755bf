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

    @Option(help: "The projections to rebuild: ledger (payments, lineages, auto_renew_changes, restores), or all.")
    var projection = "all"

    @Option(help: "Events per replay statement.")
    var batchSize = 250_000

    @Option(help: "Seconds the swap may keep trying to take its short locks before giving up.")
    var swapTimeout = 60

    @Flag(help: "Print no progress.")
    var quiet = false

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        do { _ = try ProjectionSet.named(projection) } catch { throw ValidationError("\(error)") }
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        guard swapTimeout >= 1 else { throw ValidationError("--swap-timeout must be at least 1") }
    }

    func run() throws {
        let connection = try database.connect()
        defer { connection.close() }
        var rebuilder = ProjectionRebuilder(connection: connection, projections: try ProjectionSet.named(projection),
                                            batchSize: batchSize)
        rebuilder.swapDeadline = TimeInterval(swapTimeout)
        var display = ReplayDisplay(enabled: !quiet, verb: "rebuild")
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

/// Draws a rebuild's or a verify's progress with `Progress`: the replay as a bar (or a line every
/// few seconds without a terminal), then one line per later phase.
struct ReplayDisplay {
    let enabled: Bool
    let verb: String
    private var bar: Progress?
    private var phase: ReplayProgress.Phase?

    init(enabled: Bool, verb: String) {
        self.enabled = enabled
        self.verb = verb
    }

    mutating func show(_ progress: ReplayProgress) {
        guard enabled else { return }
        if progress.phase != phase {
            finish()
            phase = progress.phase
            if progress.phase == .replaying {
                bar = Progress(label: "\(verb): replaying", total: progress.eventsTotal, unit: "events")
            } else {
                let line = "\(verb): \(progress.phase.rawValue)\(Self.detail(progress.phase))\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
        bar?.update(done: progress.eventsDone)
    }

    /// The current phase completed: the replay's bar ends at 100%, once.
    mutating func finish() {
        bar?.finish()
        bar = nil
    }

    /// The work failed: the replay's bar ends where it stopped.
    mutating func stop() {
        bar?.stop()
        bar = nil
    }

    private static func detail(_ phase: ReplayProgress.Phase) -> String {
        switch phase {
        case .replaying: ""
        case .indexing: " (building the secondary indexes)"
        case .catchingUp: " (applying the events appended meanwhile)"
        case .swapping: " (locking appends briefly, applying the last events, swapping the tables)"
        case .comparing: " (comparing the live tables with the replay)"
        }
    }
}
