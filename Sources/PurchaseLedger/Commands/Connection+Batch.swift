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
/// the set); the other commands are one statement each.
package struct BatchPlan {
    /// One statement: the indices (into the batch) of the commands it answers, in order.
    package struct Step {
        package var commands: [Int]

        func statement(_ batch: [LedgerCommand], now: Date) -> SQL {
            guard commands.count > 1 || batch[commands[0]].isPayment else {
                return batch[commands[0]].statement(now: now)
            }
            let items = Payment.items(commands.compactMap { index in
                if case .record(let payment, let kind) = batch[index] { (payment, kind) } else { nil }
            })
            return "SELECT \(unsafeSQL: LedgerCommand.resultColumns) FROM ledger.record_payments(\(JSONB(text: items))::jsonb)"
        }
    }

    package private(set) var steps: [Step] = []

    /// A key that every command that keeps its order shares (no lock key has this form).
    private static let inOrder = " in order"

    package init(_ commands: [LedgerCommand]) {
        // A command's round: one after the last round of any earlier command sharing a key
        // (consumes, refunds and cancels all share one: `keepsOrder`), and never before a
        // barrier's (`isBarrier`: a restore, a notification, a product, an account link).
        var lastRound: [String: Int] = [:]
        var rounds: [[Int]] = []
        var floor = 0
        for (index, command) in commands.enumerated() {
            var keys = command.lockKeys
            let round: Int
            if command.isBarrier {
                round = rounds.count
                floor = round + 1
            } else {
                if command.keepsOrder { keys.append(Self.inOrder) }
                round = max(floor, keys.lazy.compactMap { lastRound[$0] }.max().map { $0 + 1 } ?? 0)
            }
            for key in keys { lastRound[key] = round }
            while round >= rounds.count { rounds.append([]) }
            rounds[round].append(index)
        }
        for round in rounds where !round.isEmpty {
            // The round's payments as one step, where its first payment stands; the rest in order.
            var payments: Int?
            for index in round {
                if commands[index].isPayment {
                    if let step = payments { steps[step].commands.append(index) } else {
                        payments = steps.count
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
