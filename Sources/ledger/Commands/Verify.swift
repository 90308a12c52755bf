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

    @OptionGroup var replay: ReplayOptions

    @Option(help: "Describe at most this many differing rows per table, or chain breaks.")
    var limit = 100

    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup(title: "Store notifications") var stores: StoreOptions

    func validate() throws {
        guard !(chain && signatures) else { throw ValidationError("--chain and --signatures are separate checks: give one") }
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
        var display = ReplayDisplay(enabled: !replay.quiet, verb: "verify")
        var verifier = ProjectionVerifier(connection: connection, projections: try replay.projections,
                                          batchSize: replay.batchSize, maxRowsPerTable: limit)
        verifier.logger = LedgerLog.logger
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
        var progress = Progress(label: "verify signatures", total: nil, unit: "notifications", enabled: !replay.quiet)
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
}
