import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A user's history: every event about their payments, subscriptions, account links and store notifications, in time order.",
        discussion: """
            Each event with what it changed, the store's notification id and the jobs it caused; the \
            latest --limit of them, and a last line saying so when older ones were left out. The same \
            answer as GET /v1/users/{userId}/history; never a purchase token.
            """)

    @OptionGroup var user: UserOptions
    @Option(help: "At most this many events, the latest (1 to 10000).")
    var limit = 1000
    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let history: UserHistory
        do {
            history = try await database.withLedger { try await $0.history(userId: user.userId, limit: limit) }
        } catch let error as LedgerError where error.code == .invalidInput {
            // A bad --limit is a usage error naming the option.
            throw ValidationError("--" + error.message)
        }
        if output.json {
            var w = JSONWriter()
            history.write(into: &w)
            print(w.string)
            return
        }
        print(Table(["occurred (UTC)", "position", "change", "what", "notification", "jobs"], history.entries.map { entry in
            [entry.occurredAt.ledgerText, String(entry.position), entry.change, entry.summary, entry.notificationId ?? "",
             entry.jobs.map { "#\($0.id) \($0.kind) \($0.state)" + ($0.outcome.map { " \($0)" } ?? "") }.joined(separator: ", ")]
        }).render(empty: "no history for \(user.userId)"))
        if history.truncated {
            print("older events left out: the latest \(limit) are shown (--limit, at most \(Ledger.maxHistoryLimit))")
        }
    }
}
