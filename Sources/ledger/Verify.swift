import ArgumentParser
import Foundation
import Postgres
import PurchaseLedger
import LedgerJSON

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prove the projections true: replay the log into shadow tables and compare them row by row.",
        discussion: """
            Prints each difference (table, row, column, live value, replayed value) and exits 1 when \
            there is one, 0 when the projections equal the replay. Nothing is swapped or changed. \
            With --chain, checks the event log's hash chains instead and names the first event that \
            was altered or removed (exit 1 when a chain is broken). With --signatures, verifies again \
            every App Store notification's kept signedPayload (outer and nested JWS) against the \
            trusted Apple roots, at its own signedDate, and names each that fails (exit 1).
            """)

    @Flag(help: "Check the hash chains of the event log instead of the projections.")
    var chain = false

    @Flag(help: "Verify the kept App Store signatures again instead (roots: --apple-root-certificates).")
    var signatures = false

    @Option(help: "The projections to compare: ledger, or all.")
    var projection = "all"

    @Option(help: "Events per replay statement.")
    var batchSize = 250_000

    @Option(help: "Describe at most this many differing rows per table, or chain breaks.")
    var limit = 100

    @Flag(help: "Print no progress.")
    var quiet = false

    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup(title: "Store notifications") var stores: StoreOptions

    func validate() throws {
        guard !(chain && signatures) else { throw ValidationError("--chain and --signatures are separate checks: give one") }
        do { _ = try ProjectionSet.named(projection) } catch { throw ValidationError("\(error)") }
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let connection = try database.connect()
        defer { connection.close() }
        if signatures {
            try verifySignatures(connection)
            return
        }
        if chain {
            let report: ChainReport
            do {
                report = try ChainVerifier(connection: connection, limit: limit).verify()
            } catch let error as RebuildError {
                Terminal.fail("ledger: \(error)")
            }
            output.json ? printJSON(report) : printText(report)
            if !report.isIntact { throw ExitCode(1) }
            return
        }
        var display = ReplayDisplay(enabled: !quiet, verb: "verify")
        let verifier = ProjectionVerifier(connection: connection, projections: try ProjectionSet.named(projection),
                                          batchSize: batchSize, maxRowsPerTable: limit)
        let report: VerifyReport
        do {
            report = try verifier.verify { display.show($0) }
        } catch let error as RebuildError {
            display.stop()
            Terminal.fail("ledger: \(error)")
        }
        display.finish()
        output.json ? printJSON(report) : printText(report)
        if !report.isEqual { throw ExitCode(1) }
    }

    private func verifySignatures(_ connection: Connection) throws {
        let roots = try stores.configuration().appleRoots
        var progress = Progress(label: "verify signatures", total: nil, unit: "notifications", enabled: !quiet)
        let report: SignatureReport
        do {
            report = try StoredSignatureAudit(connection: connection, roots: roots, limit: limit)
                .verify { progress.update(done: $0) }
        } catch {
            progress.stop()
            Terminal.fail("ledger: \(error)")
        }
        progress.finish()
        if output.json {
            var w = JSONWriter()
            w.beginArray()
            for f in report.failures {
                w.beginObject()
                w.key("position")
                w.rawNumber(String(f.position))
                w.field("notificationId", f.notificationId)
                w.field("detail", f.detail)
                w.endObject()
            }
            w.endArray()
            print(w.string)
        } else if report.isIntact {
            print("the kept signatures hold: \(report.checked) App Store notifications verified again"
                  + (report.unsigned > 0 ? "; \(report.unsigned) Google Play notifications carry no signature" : ""))
        } else {
            print("\(report.failed) of \(report.checked) App Store notifications fail verification:")
            print(Table(["position", "notificationId", "detail"], report.failures.map {
                [String($0.position), $0.notificationId, $0.detail]
            }).render(empty: "none"))
        }
        if !report.isIntact { throw ExitCode(1) }
    }

    private func printText(_ report: VerifyReport) {
        if report.isEqual {
            print("the projections equal a replay of \(report.events) events (positions up to \(report.lastPosition))")
            return
        }
        let counts = report.differingRows.filter { $0.value > 0 }.sorted { $0.key < $1.key }
            .map { "\($0.value) in \($0.key)" }.joined(separator: ", ")
        print("the projections differ from a replay of \(report.events) events (positions up to \(report.lastPosition)): "
              + "differing rows: \(counts)")
        print(Table(["table", "row", "column", "live", "replayed"], report.differences.map { d in
            switch d.kind {
            case .changed: [d.table, d.rowDescription, d.column ?? "(row)", d.live ?? "null", d.replayed ?? "null"]
            case .missing: [d.table, d.rowDescription, "(row)", "missing", "present"]
            case .extra: [d.table, d.rowDescription, "(row)", "present", "missing"]
            }
        }).render(empty: "no differences"))
    }

    private func printJSON(_ report: VerifyReport) {
        var w = JSONWriter()
        w.beginArray()
        for d in report.differences {
            w.beginObject()
            w.field("table", d.table)
            w.key("key")
            w.beginObject()
            for part in d.key { w.field(part.column, part.value) }
            w.endObject()
            w.field("userId", d.userId)
            w.field("kind", d.kind.rawValue)
            w.field("column", d.column)
            w.field("live", d.live)
            w.field("replayed", d.replayed)
            w.endObject()
        }
        w.endArray()
        print(w.string)
    }

    private func printText(_ report: ChainReport) {
        guard let first = report.breaks.first else {
            print("the hash chains hold: \(report.events) events in \(report.streams) streams")
            return
        }
        print("the hash chains are broken (\(report.events) events in \(report.streams) streams checked): "
              + "first at \(Self.place(first)): \(first.detail)")
        print(Table(["position", "stream", "version", "problem", "detail"], report.breaks.map {
            [$0.position.map(String.init) ?? "-", $0.stream, $0.version.map(String.init) ?? "-", $0.problem.rawValue, $0.detail]
        }).render(empty: "no breaks"))
    }

    private func printJSON(_ report: ChainReport) {
        var w = JSONWriter()
        w.beginArray()
        for b in report.breaks {
            w.beginObject()
            w.key("position")
            if let position = b.position { w.rawNumber(String(position)) } else { w.null() }
            w.field("stream", b.stream)
            w.key("version")
            if let version = b.version { w.int(version) } else { w.null() }
            w.field("problem", b.problem.rawValue)
            w.field("detail", b.detail)
            w.endObject()
        }
        w.endArray()
        print(w.string)
    }

    private static func place(_ b: ChainBreak) -> String {
        let version = b.version.map { " version \($0)" } ?? ""
        return (b.position.map { "position \($0), " } ?? "") + "stream \(b.stream)\(version)"
    }
}
