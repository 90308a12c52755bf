import CLibPQ

extension Connection {
    /// Runs one statement with its bound parameters (`PQexecParams`, text-format results; `[UInt8]` parameters
    /// in binary format) and returns its rows.
    ///
    /// The statement is prepared on the server the first time its text runs on this connection
    /// (`PQprepare`) and executed by name afterwards (`PQexecPrepared`), so repeated queries skip
    /// parsing and planning. A statement the server forgot (`DISCARD ALL`) or whose plan became
    /// invalid is prepared again, once.
    @discardableResult
    public func query(_ sql: SQL) throws -> Rows {
        let handle = try usableHandle()
        let statement = try BoundStatement(sql)
        let key = statement.preparationKey
        guard let name = try preparedName(statement, handle) else {
            return try consumeResult(statement.execute(on: handle), handle)
        }
        do {
            return try consumeResult(statement.executePrepared(name, on: handle), handle)
        } catch let error as PostgresError where error.isStalePreparedStatement {
            preparedStatements[key] = nil
            _ = try? executeScript(unsafeSQL: "DEALLOCATE \(name)")
            _ = try consumeResult(statement.prepare(name, on: handle), handle)
            preparedStatements[key] = name
            return try consumeResult(statement.executePrepared(name, on: handle), handle)
        }
    }

    /// The name the statement is prepared under on this connection, preparing it now if it is new
    /// (`PQprepare`); nil when the connection keeps too many already.
    func preparedName(_ statement: BoundStatement, _ handle: OpaquePointer) throws -> String? {
        let key = statement.preparationKey
        if let name = preparedStatements[key] { return name }
        guard preparedStatements.count < Self.maxPreparedStatements else { return nil }
        let name = "ledger_s\(preparedStatements.count + 1)"
        _ = try consumeResult(statement.prepare(name, on: handle), handle)
        preparedStatements[key] = name
        return name
    }

    /// How many statements a connection keeps prepared; later ones run unprepared.
    static let maxPreparedStatements = 256

    /// Runs one statement (`PQexecParams`) and returns the number of rows it affected (`PQcmdTuples`).
    @discardableResult
    public func execute(_ sql: SQL) throws -> Int {
        try query(sql).affectedRows
    }

    /// Runs several `;`-separated statements without parameters (`PQexec`), as migrations need.
    /// Unless the script has its own `BEGIN`/`COMMIT`, the server runs it as one implicit transaction.
    public func executeScript(unsafeSQL script: String) throws {
        let handle = try usableHandle()
        let command = try cString(script, describing: "the SQL script")
        _ = try consumeResult(PQexec(handle, command), handle)
    }

    /// Converts and clears the result of a synchronous call (`PQresultStatus`, `PQclear`).
    func consumeResult(_ result: OpaquePointer?, _ handle: OpaquePointer) throws -> Rows {
        guard let result else { throw failure(handle, fallback: "no result from the server") }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
            abandonCopy(status, handle)
            throw PostgresError.client("COPY … FROM STDIN runs through copyFrom(unsafeSQL:rows:); COPY … TO STDOUT is not supported")
        }
        return try outcome(of: result, status).get()
    }

    /// A successful result's rows, or its error (`PQresultStatus`); does not clear the result.
    func outcome(of result: OpaquePointer, _ status: ExecStatusType) -> Result<Rows, PostgresError> {
        switch status {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            .success(Rows(result: result))
        case PGRES_PIPELINE_ABORTED:
            .failure(PostgresError(kind: .server, message: "skipped: an earlier statement in the pipeline failed"))
        default:
            .failure(error(from: result))
        }
    }

    /// Leaves a COPY state that `query` or `executeScript` entered by accident
    /// (`PQputCopyEnd` with an error, or reading and dropping `PQgetCopyData`), then drains the results.
    private func abandonCopy(_ status: ExecStatusType, _ handle: OpaquePointer) {
        switch status {
        case PGRES_COPY_IN:
            _ = PQputCopyEnd(handle, "COPY FROM STDIN is only supported through copyFrom")
        case PGRES_COPY_OUT:
            var buffer: UnsafeMutablePointer<CChar>?
            while PQgetCopyData(handle, &buffer, 0) > 0 { PQfreemem(buffer) }
        default:
            markedBroken = true
            return
        }
        while let result = PQgetResult(handle) { PQclear(result) }
    }
}

extension PostgresError {
    /// The server forgot a prepared statement (`DISCARD ALL`), or its plan no longer fits the
    /// tables: preparing it again is safe.
    public var isStalePreparedStatement: Bool {
        sqlState == .invalidStatementName || (sqlState == .featureNotSupported && message.contains("cached plan"))
    }
}
