import CLibPQ

/// The `PG_DIAG_*` field codes of `PQresultErrorField` (character macros in postgres_ext.h).
enum Diagnostic {
    static let severity = code("V")  // PG_DIAG_SEVERITY_NONLOCALIZED
    static let sqlState = code("C")
    static let messagePrimary = code("M")
    static let messageDetail = code("D")
    static let messageHint = code("H")
    static let schemaName = code("s")
    static let tableName = code("t")
    static let columnName = code("c")
    static let constraintName = code("n")

    private static func code(_ character: Unicode.Scalar) -> Int32 { Int32(UInt8(ascii: character)) }
}

extension PostgresError {
    /// Reads a failed `PGresult` with `PQresultErrorField`; falls back to `PQresultErrorMessage`.
    init(result: OpaquePointer) {
        func field(_ code: Int32) -> String? { PQresultErrorField(result, code).map { String(cString: $0) } }
        let primary = field(Diagnostic.messagePrimary) ?? String(cString: PQresultErrorMessage(result))
        self.init(
            kind: .server,
            message: Redaction.oneLine(primary),
            sqlState: field(Diagnostic.sqlState).map(SQLState.init(rawValue:)),
            detail: field(Diagnostic.messageDetail),
            hint: field(Diagnostic.messageHint),
            constraint: field(Diagnostic.constraintName),
            table: field(Diagnostic.tableName),
            column: field(Diagnostic.columnName),
            schema: field(Diagnostic.schemaName))
    }

    /// `PQerrorMessage` of a connection, as one line of the given kind.
    init(kind: Kind, connection handle: OpaquePointer, fallback: String) {
        let message = Redaction.oneLine(String(cString: PQerrorMessage(handle)))
        self.init(kind: kind, message: message.isEmpty ? fallback : message)
    }
}
