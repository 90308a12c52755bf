import CLibPQ

extension Connection {
    /// Runs `body` between `BEGIN` and `COMMIT`.
    ///
    /// When `body` throws, the transaction is rolled back and the body's error is rethrown unchanged; if the
    /// `ROLLBACK` itself fails, the connection is marked broken (so a pool drops it). A `COMMIT` that the
    /// server turns into a rollback (a statement failed and the body caught its error) throws `.client`.
    /// Refuses to nest (`PQtransactionStatus` must be idle): use `savepoint(_:)` inside a transaction.
    public func transaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try framed(begin: "BEGIN", commit: true, body)
    }

    /// Runs `body` in a REPEATABLE READ transaction that is always rolled back: for work whose
    /// writes are scratch (a verify's shadow tables), which vanish with the transaction instead of
    /// being dropped in it. Returns what `body` returns; rethrows its error unchanged. Refuses to
    /// nest, as `transaction(_:)`.
    public func rolledBackRepeatableRead<T>(_ body: (Connection) throws -> T) throws -> T {
        try framed(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ", commit: false, body)
    }

    /// `begin`, then `body`, then `COMMIT` (or `ROLLBACK` when `commit` is false); `ROLLBACK`
    /// when `body` throws, marking the connection broken if that fails.
    private func framed<T>(begin: String, commit: Bool, _ body: (Connection) throws -> T) throws -> T {
        let handle = try usableHandle()
        guard PQtransactionStatus(handle) == PQTRANS_IDLE else {
            throw PostgresError.client("a transaction is already open on this connection; use savepoint(_:) to nest")
        }
        try frame(begin)
        let value: T
        do {
            value = try body(self)
        } catch {
            do { try frame("ROLLBACK") } catch { markedBroken = true }
            throw error
        }
        if !commit {
            do { try frame("ROLLBACK") } catch { markedBroken = true; throw error }
        } else if try frame("COMMIT").commandTag == "ROLLBACK" {
            throw PostgresError.client(
                "COMMIT rolled the transaction back: a statement inside it failed and its error was caught")
        }
        return value
    }

    /// Sends `BEGIN`, `COMMIT` or `ROLLBACK` (`PQexec`), also when the current use was cancelled:
    /// a cancelled body's transaction still ends, and the connection goes back to its pool idle.
    @discardableResult
    private func frame(_ command: String) throws -> Rows {
        let handle = try usableHandle(framing: true)
        return try consumeResult(PQexec(handle, command), handle)
    }

    /// Runs `body` in a REPEATABLE READ transaction (every statement sees the snapshot of the
    /// first one) and commits; rolls back and rethrows when `body` throws, as `transaction(_:)`.
    public func repeatableRead<T>(_ body: (Connection) throws -> T) throws -> T {
        try transaction { connection in
            try connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            return try body(connection)
        }
    }

    /// Runs `body` inside `SAVEPOINT` … `RELEASE SAVEPOINT`; nests. When `body` throws, the work since the
    /// savepoint is undone (`ROLLBACK TO SAVEPOINT`), the enclosing transaction continues, and the body's
    /// error is rethrown unchanged. Must run inside `transaction(_:)` (or an explicit `BEGIN`).
    public func savepoint<T>(_ body: (Connection) throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "swift_savepoint_\(savepointDepth)"
        try executeScript(unsafeSQL: "SAVEPOINT \(name)")
        let value: T
        do {
            value = try body(self)
        } catch {
            // If this fails the transaction stays aborted; the enclosing transaction's ROLLBACK cleans up.
            try? executeScript(unsafeSQL: "ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)")
            throw error
        }
        try executeScript(unsafeSQL: "RELEASE SAVEPOINT \(name)")
        return value
    }
}
