import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The event log in the catch-up reader's gap-free order: one page, or every event as it comes with --follow.",
        discussion: """
            Without --follow: at most --limit events after --after, then (in a table) the cursor \
            to pass as --after next: one position on one server, one per node group on a Citus \
            cluster whose commands run on its workers. With --follow: every event after --after, one line each, as each \
            becomes final, until interrupted. --json prints one JSON object a line (NDJSON), as \
            GET /v1/events shows an event.
            """)

    @Option(help: "The cursor of the last events already read: a position, or one per node group joined by commas (0: from the start).")
    var after = "0"
    @Option(help: "At most this many events (1 to 1000), without --follow.")
    var limit = 100
    @Flag(help: "Keep printing events as they become final, until interrupted.")
    var follow = false
    @Flag(help: "One JSON object a line instead of a table.")
    var json = false
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        do {
            let cursor = try EventCursor(parsing: after)
            try await database.withLedger { ledger in
                if follow {
                    for try await event in ledger.eventFeed(after: cursor) {
                        // Unbuffered: a reader of a pipe sees each event as it comes.
                        FileHandle.standardOutput.write(Data((line(event) + "\n").utf8))
                    }
                    return
                }
                let page = try await ledger.events(after: cursor, limit: limit)
                if json {
                    for event in page.events { print(line(event)) }
                } else {
                    print(Table(["position", "type", "stream", "occurred (UTC)"],
                                page.events.map { [String($0.position), $0.type, $0.stream, $0.occurredAt.ledgerText] })
                        .render(empty: "no events after \(cursor)"))
                    print("next: --after \(page.cursor)")
                }
            }
        } catch let error as LedgerError where error.code == .invalidInput {
            // A bad --after or --limit is a usage error naming the option.
            throw ValidationError("--" + error.message)
        }
    }

    private func line(_ event: CatchUpReader.Event) -> String {
        if json {
            var w = JSONWriter()
            event.write(into: &w)
            return w.string
        }
        return "\(event.position)\t\(event.type)\t\(event.stream)\t\(event.occurredAt.ledgerText)"
    }
}
