import Foundation
import Postgres
import PurchaseLedger

extension Connection {
    /// Runs one command on its own, as `ledger ingest` would for a one-line file.
    public func run(_ command: LedgerCommand) throws -> CommandOutcome {
        try executeBatch([command])[0]
    }

    /// Runs NDJSON lines through the same path as `ledger ingest` and returns the results.
    public func ingest(_ lines: [String], batchSize: Int = 500, stores: StoreConfiguration = .none) throws -> [CommandOutcome] {
        var source = ArrayLines(lines)
        var ingestor = Ingestor(batchSize: batchSize, stores: stores) { self }
        var results: [CommandOutcome] = []
        _ = try ingestor.run(&source, report: { results.append($0.outcome) })
        return results
    }

    public func count(_ sql: String) throws -> Int {
        try query(SQL(unsafeSQL: sql))[0].decode(0, as: Int.self)
    }
}

public struct ArrayLines: LineSource {
    public let lines: [String]
    public var lineNumber = 0
    public var hasBufferedLine: Bool { lineNumber < lines.count }

    public init(_ lines: [String]) { self.lines = lines }

    public mutating func next() throws -> LineReader.Line? {
        guard lineNumber < lines.count else { return nil }
        lineNumber += 1
        return .text(ArraySlice(lines[lineNumber - 1].utf8))
    }
}

extension Connection {
    /// Takes the keys' locks out of every command of this database (`ledger.lock_keys` takes only
    /// the writers' gate; on a Citus coordinator, Citus makes the function again on every node):
    /// two commands sharing a key then do not wait for each other, which is what the window
    /// between two nodes' commits of a 2PC amounts to.
    public func takeTheKeysLocksOut() throws {
        try executeScript(unsafeSQL: """
            CREATE OR REPLACE FUNCTION ledger.lock_keys(p_keys text[]) RETURNS void
            LANGUAGE sql AS 'SELECT pg_advisory_xact_lock_shared(ledger.writers_gate())'
            """)
    }
}
