import ArgumentParser
import Foundation
import LedgerOutput
import PurchaseLedger

struct Ingest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply newline-delimited JSON commands and print one JSON result per line.",
        discussion: "Exit status: 0 when no line was rejected, 1 when some were, 2 for a usage error or an unreachable database.")

    @Argument(help: "The NDJSON file, or - for standard input.")
    var file: String = "-"

    @Option(help: "Lines per transaction (one round trip each); a batch the server's lock table cannot hold is split.")
    var batchSize: Int = 200

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var stores: StoreOptions

    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
    }

    func run() throws {
        let descriptor: Int32 = file == "-" ? STDIN_FILENO : open(file, O_RDONLY)
        guard descriptor >= 0 else {
            throw ValidationError("cannot open \(file): \(String(cString: strerror(errno)))")
        }
        let configuration = try stores.configuration()
        let first = try database.connect()
        var handed = false
        let database = self.database
        var ingestor = Ingestor(batchSize: batchSize, stores: configuration, logger: LedgerLog.logger) {
            if !handed { handed = true; return first }
            return try database.connect()
        }
        var reader = LineReader(descriptor: descriptor)
        var out = OutputBuffer()
        let summary = try ingestor.run(&reader, report: { out.line($0.json) }, flush: { out.flush() })
        out.flush()
        if summary.rejected > 0 { throw ExitCode(1) }
    }
}
