import Foundation
import Postgres
import LedgerJSON

extension Connection {
    /// Runs the commands in one transaction and one round trip (libpq pipeline mode) and
    /// returns their outcomes in order. Throws, having committed nothing, if any statement failed.
    package func executeBatch(_ commands: [LedgerCommand], now: Date = Date()) throws -> [CommandOutcome] {
        if commands.count == 1 {
            // Autocommit: a single statement is its own transaction.
            let rows = try query(commands[0].statement(now: now))
            return [try commands[0].outcome(from: rows[0])]
        }
        // The batch's locks first, all of them, in the ledger's one order: two batches never
        // hold each a key the other waits for (a deadlock), whatever the order of their lines.
        let plan = BatchPlan(commands)
        var statements: [SQL] = [SQL(unsafeSQL: "BEGIN"), LedgerCommand.lockStatement(for: commands)]
        statements.reserveCapacity(plan.steps.count + 3)
        for step in plan.steps { statements.append(step.statement(commands, now: now)) }
        statements.append(SQL(unsafeSQL: "COMMIT"))
        let results = try pipeline(statements)
        if let failure = results.lazy.compactMap({ result -> PostgresError? in
            if case .failure(let error) = result { return error } else { return nil }
        }).first {
            _ = try? executeScript(unsafeSQL: "ROLLBACK")
            throw failure
        }
        var outcomes = [CommandOutcome?](repeating: nil, count: commands.count)
        for (step, result) in zip(plan.steps, results.dropFirst(2)) {
            let rows = try result.get()
            guard rows.count == step.commands.count else {
                throw PostgresError(kind: .decoding, message: "the database answered \(rows.count) results for \(step.commands.count) commands")
            }
            for (index, row) in zip(step.commands, rows) { outcomes[index] = try commands[index].outcome(from: row) }
        }
        return outcomes.map { $0! }
    }
}

/// How a batch runs: in rounds, each holding the commands that are first, among the batch's
/// commands not yet run, with each of their ``LedgerCommand/lockKeys``. Commands that share a
/// key (a purchase and its consume, a payment and its renewal) keep their input order; the
/// commands of one round are independent of each other. In a round, every purchase and renewal
/// goes to the database as one set (`ledger.record_payments`, the rules applied by joins over
/// the set), its consumes as one set (`ledger.consume_batch`) on each side of the payments; the
/// other commands are one statement each.
package struct BatchPlan {
    /// One statement: the indices (into the batch) of the commands it answers, in order.
    package struct Step {
        package var commands: [Int]

        func statement(_ batch: [LedgerCommand], now: Date) -> SQL {
            let first = batch[commands[0]]
            if first.isPayment {
                let items = Payment.items(commands.compactMap { index in
                    if case .record(let payment, let kind) = batch[index] { (payment, kind) } else { nil }
                })
                return "SELECT \(unsafeSQL: LedgerCommand.resultColumns) FROM ledger.record_payments(\(JSONB(text: items))::jsonb)"
            }
            guard commands.count > 1 else { return first.statement(now: now) }
            return LedgerCommand.consumeBatchStatement(commands.map { batch[$0] }, now: now)
        }
    }

    package private(set) var steps: [Step] = []

    /// The key of the last round of a refund (no lock key has this form).
    private static let inOrder = " in order"

    package init(_ commands: [LedgerCommand]) {
        // A command's round: one after the last round of any earlier command sharing a key, and
        // never before a barrier's (`isBarrier`: a restore, a notification, a product, an account
        // link). Consumes and refunds keep their order (`keepsOrder`: either may name its payment
        // by an alias, a key no command foresees, so two of them may touch one payment without
        // sharing a key): a refund runs one round after every earlier consume and refund, a
        // consume one round after every earlier refund and in the round of the latest earlier
        // consume or a later one. A cancel keeps only its lineage key's order. Payments of one
        // lineage may share a round (when no other command on the lineage came between them):
        // `ledger.apply_payments` orders them inside the set. Consumes may
        // share a round: a round's consumes run as one set in which the items of one payment keep
        // their input order, whatever names they use (`ledger.apply_consumes`), and its two
        // consume steps (before and after its payments) run in input order too.
        var lastRound: [String: Int] = [:]
        var rounds: [[Int]] = []
        var floor = 0
        var lastConsume: Int?
        // The lineage keys whose last command so far is a payment.
        var paymentsLast: Set<String> = []
        for (index, command) in commands.enumerated() {
            let keys = command.lockKeys
            var round: Int
            if command.isBarrier {
                round = rounds.count
                floor = round + 1
            } else {
                round = max(floor, keys.lazy.compactMap { key -> Int? in
                    guard let last = lastRound[key] else { return nil }
                    // Payments of one lineage may share a round: ledger.apply_payments keeps
                    // their order inside the set (the lineage the first of them defines).
                    return command.isPayment && paymentsLast.contains(key) ? last : last + 1
                }.max() ?? 0)
                if command.keepsOrder {
                    let afterConsumes = lastConsume.map { command.isConsume ? $0 : $0 + 1 } ?? 0
                    round = max(round, lastRound[Self.inOrder].map { $0 + 1 } ?? 0, afterConsumes)
                    if command.isConsume { lastConsume = round } else { lastRound[Self.inOrder] = round }
                }
            }
            for key in keys {
                lastRound[key] = round
                if command.isPayment && key.hasPrefix("lineage:") { paymentsLast.insert(key) } else { paymentsLast.remove(key) }
            }
            while round >= rounds.count { rounds.append([]) }
            rounds[round].append(index)
        }
        for round in rounds where !round.isEmpty {
            // The round's payments as one step, where its first payment stands; its consumes as
            // one step before that and one after it, so that each consume keeps its place
            // relative to the payments; the rest in order.
            var payments: Int?
            var consumes: Int?
            for index in round {
                if commands[index].isPayment {
                    if let step = payments { steps[step].commands.append(index) } else {
                        payments = steps.count
                        consumes = nil
                        steps.append(Step(commands: [index]))
                    }
                } else if commands[index].isConsume {
                    if let step = consumes { steps[step].commands.append(index) } else {
                        consumes = steps.count
                        steps.append(Step(commands: [index]))
                    }
                } else {
                    steps.append(Step(commands: [index]))
                }
            }
        }
    }
}

extension LedgerCommand {
    /// Takes the advisory locks of every command's ``lockKeys`` in the ledger's one global order
    /// (`ledger.lock_keys`), for the transaction that runs them.
    package static func lockStatement(for commands: [LedgerCommand]) -> SQL {
        var keys = JSONWriter()
        keys.beginArray()
        for command in commands { for key in command.lockKeys { keys.string(key) } }
        keys.endArray()
        return "SELECT ledger.lock_keys(ARRAY(SELECT jsonb_array_elements_text(\(JSONB(text: keys.string))::jsonb)))"
    }
}
