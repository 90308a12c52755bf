import ArgumentParser
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
///
/// The handler (`signal`, run by whichever thread the signal lands on) writes a byte to a pipe,
/// and a thread of its own reads the pipe and makes the call; a second SIGINT exits at once. Not a
/// dispatch signal source: that needs SIGINT ignored, and on Linux an ignored signal may be
/// dropped before the source sees it (a loaded test run lost one).
private final class Interrupts {
    /// The pipe's read and write ends, made before the handler can run.
    private static let ends: [Int32] = {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        return ends
    }()

    init(_ first: @escaping @Sendable () -> Void) {
        let reader = Self.ends[0]
        _ = Self.ends[1]
        Thread.detachNewThread {
            var byte: UInt8 = 0
            var interrupts = 0
            while read(reader, &byte, 1) == 1, byte != 0 {
                interrupts += 1
                if interrupts == 1 { first() } else { exit(130) }
            }
        }
        signal(SIGINT) { _ in
            var byte: UInt8 = 1
            _ = write(Interrupts.ends[1], &byte, 1)
        }
    }

    /// SIGINT ends the process again, and the reading thread ends.
    func stop() {
        signal(SIGINT, SIG_DFL)
        var byte: UInt8 = 0
        _ = write(Self.ends[1], &byte, 1)
    }
}
