import Foundation
import Postgres

extension Connection {
    /// Runs the commands in one transaction and one round trip (libpq pipeline mode) and
    /// returns their outcomes in order. Throws, having committed nothing, if any statement failed.
    package func executeBatch(_ commands: [LedgerCommand], now: Date = Date()) throws -> [CommandOutcome] {
        if commands.count == 1 {
            // Autocommit: a single statement is its own transaction.
            let rows = try query(commands[0].statement(now: now))
            return [try commands[0].outcome(from: rows[0])]
        }
        var statements: [SQL] = [SQL(unsafeSQL: "BEGIN")]
        statements.reserveCapacity(commands.count + 2)
        for command in commands { statements.append(command.statement(now: now)) }
        statements.append(SQL(unsafeSQL: "COMMIT"))
        let results = try pipeline(statements)
        if let failure = results.lazy.compactMap({ result -> PostgresError? in
            if case .failure(let error) = result { return error } else { return nil }
        }).first {
            _ = try? executeScript(unsafeSQL: "ROLLBACK")
            throw failure
        }
        return try zip(commands, results.dropFirst()).map { command, result in
            try command.outcome(from: result.get()[0])
        }
    }
}
