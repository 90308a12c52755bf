import LedgerDemo
import ArgumentParser
import Foundation
import Postgres
import PurchaseLedger

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate realistic ledger traffic (fixed seed), ingest it, and show what the ledger knows.",
        discussion: """
            With --write FILE, only writes about --events contract lines of NDJSON to FILE (or - for \
            standard output) and touches no database.
            """)

    @Option(help: "How many users to generate.")
    var users: Int = 3000

    @Option(help: "The random seed: the same seed gives the same data.")
    var seed: UInt64 = 42

    @Option(help: "Write the NDJSON to this file (- for standard output) instead of ingesting it.")
    var write: String?

    @Option(help: "With --write: about how many lines to write.")
    var events: Int?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if events != nil, write == nil { throw ValidationError("--events goes with --write") }
        if let events, events < 1 { throw ValidationError("--events must be at least 1") }
        guard users >= 1 else { throw ValidationError("--users must be at least 1") }
    }

    func run() async throws {
        if let write {
            try writeFile(write)
            return
        }
        try ingest()
        try await database.withLedger { try await show($0) }
    }

    /// Migrates, then ingests the generated lines on one connection, as `ledger ingest` does.
    private func ingest() throws {
        let connection = try database.connect()
        defer { connection.close() }
        try Migrator().migrate(connection)
        var source = GeneratedLines(DemoGenerator(seed: seed, users: users))
        var progress = Progress(label: "ingesting demo data", total: nil, unit: "lines")
        var rejected: [String: Int] = [:]
        var ingestor = Ingestor(logger: LedgerLog.logger) { connection }
        let summary = try ingestor.run(&source, report: { result in
            if let error = result.outcome.error { rejected[error.code.rawValue, default: 0] += 1 }
            progress.advance()
        })
        progress.finish()
        let reasons = rejected.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let applied = summary.lines - summary.rejected
        print("ingested \(summary.lines) lines with seed \(seed): \(applied) applied, \(summary.rejected) refused"
              + (reasons.isEmpty ? "" : " (\(reasons))"))
    }

    /// What the ledger knows: the library's queries, as a backend calls them.
    private func show(_ ledger: Ledger) async throws {
        let at = DemoGenerator.clock.date
        let user = DemoGenerator.showcaseUser
        print("\n== \(user): unconsumed payments (goods paid for, not handed out)")
        let unconsumed = try await ledger.unconsumed(userId: user)
        print(Table(["paymentSeq", "store", "product", "price", "purchased (UTC)"], unconsumed.map {
            [$0.paymentSeq, $0.storeCode.rawValue, $0.productId, "\($0.price) \($0.currency)", $0.purchaseTime.ledgerText]
        }).render(empty: "none"))
        print("\n== \(user): active subscriptions at \(at.ledgerText)")
        let subscriptions = try await ledger.subscriptions(userId: user, at: at)
        print(Table(["store", "product", "type", "expires (UTC)", "autoRenewing"], subscriptions.map {
            [$0.storeCode.rawValue, $0.productId, $0.productType.rawValue, $0.expiryTime?.ledgerText ?? "-", $0.autoRenewing ? "yes" : "no"]
        }).render(empty: "none"))
        let summary = try await ledger.summary(at: at)
        print("\n== the ledger at \(at.ledgerText)")
        let events = summary.eventsByType.map { "\($0.type) \($0.count)" }.joined(separator: ", ")
        let payments = summary.paymentsByStore.map { "\($0.store) \($0.count)" }.joined(separator: ", ")
        let revenue = summary.revenue.map { "\($0.currency) gross \($0.gross), refunds \($0.refunds), net \($0.net)" }
        let statuses = summary.subscriptionsByStatus.map { "\($0.status) \($0.count)" }.joined(separator: ", ")
        let oldest = summary.oldestUnconsumed.map { ", oldest from \($0.ledgerText)" } ?? ""
        print("events:        \(events)")
        print("users:         \(summary.users); payments: \(payments)")
        print("revenue:       \(revenue.joined(separator: "; "))")
        print("unconsumed:    \(summary.unconsumed) payments\(oldest)")
        print("subscriptions: \(statuses)")
    }

    private func writeFile(_ path: String) throws {
        let descriptor: Int32 = path == "-" ? STDOUT_FILENO : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else {
            throw ValidationError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { if descriptor != STDOUT_FILENO { close(descriptor) } }
        let generator = DemoGenerator(seed: seed, users: events == nil ? users : Int.max, maxLines: events)
        var out = OutputBuffer(descriptor: descriptor)
        var progress = Progress(label: "writing \(path)", total: events, unit: "lines", enabled: path != "-")
        for line in generator {
            out.line(line)
            progress.advance()
        }
        out.flush()
        progress.finish()
    }
}
