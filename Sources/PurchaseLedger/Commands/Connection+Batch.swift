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
        var statements: [SQL] = [SQL(unsafeSQL: "BEGIN"), LedgerCommand.lockStatement(for: commands)]
        statements.reserveCapacity(commands.count + 3)
        for command in commands { statements.append(command.statement(now: now)) }
        statements.append(SQL(unsafeSQL: "COMMIT"))
        let results = try pipeline(statements)
        if let failure = results.lazy.compactMap({ result -> PostgresError? in
            if case .failure(let error) = result { return error } else { return nil }
        }).first {
            _ = try? executeScript(unsafeSQL: "ROLLBACK")
            throw failure
        }
        return try zip(commands, results.dropFirst(2)).map { command, result in
            try command.outcome(from: result.get()[0])
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
