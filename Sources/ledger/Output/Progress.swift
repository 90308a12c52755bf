import Foundation

/// Progress of long work on standard error: a bar (done / total, rate, time left) on a terminal,
/// a plain line every few seconds otherwise, nothing when disabled.
///
/// `finish()` prints the final line once, at 100%: the count done is then the total, even when
/// `total` was an estimate the work overshot or fell short of. Lines before it never say 100%,
/// so a log without a terminal shows the end exactly once.
struct Progress {
    let label: String
    let total: Int?
    let unit: String
    let enabled: Bool
    private(set) var done = 0
    private let started = Date()
    private var lastShown = Date.distantPast
    private var finished = false
    private let terminal = Terminal.stderrIsTerminal

    init(label: String, total: Int?, unit: String, enabled: Bool = true) {
        self.label = label
        self.total = total
        self.unit = unit
        self.enabled = enabled
    }

    mutating func advance(by count: Int = 1) {
        done += count
        guard enabled, !finished, done & 1023 == 0 || count > 1 else { return }
        if let total, done >= total { return }  // 100% is for `finish()` alone
        let now = Date()
        if now.timeIntervalSince(lastShown) >= (terminal ? 0.2 : 5) {
            lastShown = now
            show(final: false)
        }
    }

    /// Sets the count (for work that reports totals rather than steps).
    mutating func update(done: Int) {
        advance(by: max(0, done - self.done))
    }

    /// The work is complete: prints the final line (100%, the count done, the time taken) once.
    mutating func finish() {
        guard enabled, !finished else { return }
        finished = true
        show(final: true)
    }

    /// The work stopped before completing (an error): prints where it stopped, without 100%.
    mutating func stop() {
        guard enabled, !finished else { return }
        finished = true
        show(final: false)
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private func show(final: Bool) {
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(done) / elapsed
        var text: String
        if final, total != nil {
            text = terminal ? "\(label) [" + String(repeating: "#", count: 30) + "] " : "\(label): "
            text += "\(done)/\(done) \(unit) (100%), \(Int(rate)) \(unit)/s"
        } else if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let left = rate > 0 ? Double(max(0, total - done)) / rate : 0
            if terminal {
                let width = 30
                let filled = Int(fraction * Double(width))
                text = "\(label) [" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            } else {
                text = "\(label): "
            }
            text += "\(done)/\(total) \(unit) (\(Int(fraction * 100))%), \(Int(rate)) \(unit)/s, \(Progress.duration(left)) left"
        } else {
            text = "\(label): \(done) \(unit), \(Int(rate)) \(unit)/s"
            if !final { text += ", \(Progress.duration(elapsed))" }
        }
        if final { text += ", done in \(Progress.duration(elapsed))" }
        let line = terminal ? "\r\u{1B}[K" + text + (final ? "\n" : "") : text + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(s % 3600 / 60)m" : s >= 60 ? "\(s / 60)m\(s % 60)s" : String(format: "%.1fs", seconds)
    }
}
