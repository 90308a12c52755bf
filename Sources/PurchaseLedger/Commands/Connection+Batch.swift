import Foundation
import Postgres

extension Connection {
    /// Runs the commands as one statement, one transaction and one round trip: the typed array
    /// bound to `ledger.execute_commands`, the write path's one entry point, which takes their
    /// locks, plans their rounds and applies their rules (docs/design.md, "The write path").
    /// Returns their outcomes in order. Throws, having committed nothing, if the statement failed.
    ///
    /// `owner` routes the call on a Citus cluster (``CommandRouting``): the same commands bound
    /// to `ledger.execute_user_commands(owner, …)`, which Citus runs on the owner's worker; nil
    /// runs them where the connection is, as on one server.
    package func executeBatch(_ commands: [LedgerCommand], now: Date = Date(), routedBy owner: String? = nil) throws -> [CommandOutcome] {
        guard !commands.isEmpty else { return [] }
        let array = try LedgerCommand.array(commands, now: now)
        let rows = try owner.map { owner in
            try query("""
                SELECT \(unsafeSQL: LedgerCommand.resultColumns)
                  FROM ledger.execute_user_commands(\(owner), \(array)::ledger.command[])
                """)
        } ?? query("""
            SELECT \(unsafeSQL: LedgerCommand.resultColumns) FROM ledger.execute_commands(\(array)::ledger.command[])
            """)
        guard rows.count == commands.count else {
            throw PostgresError(kind: .decoding, message: "the database answered \(rows.count) results for \(commands.count) commands")
        }
        return try zip(commands, rows).map { try $0.outcome(from: $1) }
    }
}

extension Connection {
    /// Whether the ledger is distributed on a Citus cluster, where commands run on the users'
    /// workers (`ledger.commands_on_workers()`). False on a database whose schema predates the
    /// function (a library deployed before `ledger migrate` ran): its commands run where they
    /// are sent, as they did.
    package func commandsOnWorkers() throws -> Bool {
        do {
            return try query("SELECT ledger.commands_on_workers() AS on_workers").first?.decode("on_workers", as: Bool.self) ?? false
        } catch let error as PostgresError where error.sqlState == .undefinedFunction {
            return false
        }
    }

    /// The owner of each command, in order (`ledger.command_owners`): the user it names, else the
    /// one its keys' registries name now, `""` when none is known yet.
    package func commandOwners(_ commands: [LedgerCommand], now: Date = Date()) throws -> [String] {
        let array = try LedgerCommand.array(commands, now: now)
        return try query("SELECT unnest(ledger.command_owners(\(array)::ledger.command[])) AS owner")
            .map { try $0.decode("owner", as: String.self) }
    }

    /// How `ledger.execute_commands` runs the commands as a batch (`ledger.plan_commands`): its
    /// steps in order, each the indices of the commands it runs, in input order.
    package func batchSteps(_ commands: [LedgerCommand], now: Date = Date()) throws -> [[Int]] {
        let array = try LedgerCommand.array(commands, now: now)
        var steps: [[Int]] = []
        for row in try query("""
            SELECT step, ord - 1 AS index FROM unnest((ledger.plan_commands(\(array)::ledger.command[])).steps)
                   WITH ORDINALITY AS x(step, ord) ORDER BY step, ord
            """) {
            let step = try row.decode("step", as: Int.self), index = try row.decode("index", as: Int.self)
            if steps.count < step { steps.append([]) }
            steps[step - 1].append(index)
        }
        return steps
    }

    /// The keys whose advisory locks the command takes (`ledger.command_lock_keys`).
    package func lockKeys(of command: LedgerCommand, now: Date = Date()) throws -> [String] {
        try query("""
            SELECT key FROM unnest(ledger.command_lock_keys(\(command.composite(now: now))::ledger.command)) AS key
             WHERE key IS NOT NULL
            """).map { try $0.decode("key", as: String.self) }
    }

    /// Takes the advisory locks of the commands' keys, in the ledger's one order, for the
    /// transaction under way (what `ledger.execute_commands` does first for a batch).
    package func lockKeys(for commands: [LedgerCommand], now: Date = Date()) throws {
        let array = try LedgerCommand.array(commands, now: now)
        _ = try query("SELECT ledger.lock_keys((ledger.plan_commands(\(array)::ledger.command[])).keys)")
    }
}

extension LedgerCommand {
    /// The commands as one `ledger.command[]` parameter.
    static func array(_ commands: [LedgerCommand], now: Date) throws -> PostgresArray {
        PostgresArray(elements: try commands.map { try $0.composite(now: now).postgresValue() })
    }
}
