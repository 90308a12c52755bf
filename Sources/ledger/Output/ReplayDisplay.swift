import Foundation
import PurchaseLedger

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
