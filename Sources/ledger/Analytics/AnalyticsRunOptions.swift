import ArgumentParser
import Dispatch
import Foundation
import PurchaseLedger

/// `--timeout`, and how a report runs from the command line: Ctrl-C stops its query on the
/// database too (a killed client alone would leave it running there until it ends).
struct AnalyticsRunOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Seconds the report may run before the database stops it; 0 for no limit.",
                               valueName: "seconds"))
    var timeout: Double = 30

    func validate() throws {
        guard timeout.isFinite, (0...86_400).contains(timeout) else {
            throw ValidationError("--timeout: expected seconds from 0 (no limit) to 86400, got \(timeout)")
        }
    }

    /// The library's report timeout; nil for none.
    var reportTimeout: Duration? {
        timeout == 0 ? nil : .milliseconds(max(1, Int64((timeout * 1000).rounded())))
    }

    /// Runs `body` with a ledger of one connection. The first Ctrl-C (SIGINT) cancels the report
    /// on the database and exits 130; a second exits at once. A report past the timeout exits 1
    /// with one line.
    func withLedger<T: Sendable>(_ database: DatabaseOptions,
                                 _ body: @escaping @Sendable (Ledger) async throws -> T) async throws -> T {
        let timeout = reportTimeout
        let work = Task { try await database.withLedger(reportTimeout: timeout) { try await body($0) } }
        let interrupts = Interrupts { work.cancel() }
        defer { interrupts.stop() }
        do {
            return try await work.value
        } catch is CancellationError {
            Terminal.fail("ledger: interrupted; the report was cancelled on the database", status: 130)
        } catch let error as ReportTimeoutError {
            Terminal.fail("ledger: \(error)", status: 1)
        }
    }
}

/// SIGINT turned into a call instead of the default end of the process, while a report runs.
private final class Interrupts {
    private let source: any DispatchSourceSignal

    init(_ first: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let count = Counter()
        source.setEventHandler {
            if count.next() == 1 { first() } else { exit(130) }
        }
        source.resume()
        self.source = source
    }

    func stop() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }

    private final class Counter: @unchecked Sendable {
        // @unchecked: only the signal source's handler touches it, and a dispatch source runs its
        // handler one call at a time.
        private var value = 0
        func next() -> Int {
            value += 1
            return value
        }
    }
}
