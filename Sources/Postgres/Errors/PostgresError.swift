/// An error from the server, from libpq, or from encoding and decoding values.
///
/// Server errors keep the fields of `PQresultErrorField`. `description` is one line and never
/// contains bound values, the `detail` field (which often repeats row values), or connection secrets.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// Where the error comes from.
    public enum Kind: Sendable {
        /// Opening a connection failed (`PQconnectdbParams`).
        case connection
        /// The server refused a statement; the connection is still usable.
        case server
        /// A Swift value could not be sent (for example a string containing U+0000).
        case encoding
        /// A result cell could not be read as the requested Swift type.
        case decoding
        /// The API was misused (closed connection or pool, nested transaction, ...).
        case client
        /// The connection was lost or the server is shutting down; it cannot be used again.
        case connectionBroken
    }

    /// Where the error comes from.
    public var kind: Kind
    /// `PG_DIAG_SQLSTATE`, when the server sent one.
    public var sqlState: SQLState?
    /// `PG_DIAG_MESSAGE_PRIMARY`, or libpq's own message.
    public var message: String
    /// `PG_DIAG_MESSAGE_DETAIL`; may contain row values, so it is not part of `description`.
    public var detail: String?
    /// `PG_DIAG_MESSAGE_HINT`.
    public var hint: String?
    /// `PG_DIAG_CONSTRAINT_NAME`.
    public var constraint: String?
    /// `PG_DIAG_TABLE_NAME`.
    public var table: String?
    /// `PG_DIAG_COLUMN_NAME`, or the result column for decoding errors.
    public var column: String?
    /// `PG_DIAG_SCHEMA_NAME`.
    public var schema: String?

    /// Creates an error; the library itself fills these from libpq.
    public init(
        kind: Kind, message: String, sqlState: SQLState? = nil, detail: String? = nil, hint: String? = nil,
        constraint: String? = nil, table: String? = nil, column: String? = nil, schema: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.table = table
        self.column = column
        self.schema = schema
    }

    /// One line, for example `SQLSTATE 23505: duplicate key value violates unique constraint "t_pkey" (constraint t_pkey, table t)`.
    public var description: String {
        var line = kind == .server ? "" : "\(kind.label): "
        if let sqlState { line += "SQLSTATE \(sqlState): " }
        line += Redaction.oneLine(sqlState?.errorClass == "22" ? Redaction.quotedValues(in: message) : message)
        let context = [constraint.map { "constraint \($0)" }, table.map { "table \($0)" }].compactMap { $0 }
        if !context.isEmpty { line += " (\(context.joined(separator: ", ")))" }
        return line
    }
}

extension PostgresError.Kind {
    var label: String {
        switch self {
        case .connection: "connection error"
        case .server: "server error"
        case .encoding: "encoding error"
        case .decoding: "decoding error"
        case .client: "client error"
        case .connectionBroken: "connection broken"
        }
    }
}

extension PostgresError {
    static func client(_ message: String) -> PostgresError { PostgresError(kind: .client, message: message) }

    static func encoding(_ message: String) -> PostgresError { PostgresError(kind: .encoding, message: message) }

    /// A value that libpq would have to pass as a C string holds U+0000; it would be truncated there.
    static func nul(in what: String) -> PostgresError {
        .encoding("\(what) contains U+0000 (NUL), which libpq cannot send; nothing was sent")
    }

    /// A cell that cannot become `swiftType`; names the column, the Swift type and the server type OID, never the value.
    static func decoding(column: String, type: UInt32, as swiftType: Any.Type, _ reason: String) -> PostgresError {
        PostgresError(
            kind: .decoding,
            message: "column \"\(column)\" (type OID \(type)) cannot be decoded as \(swiftType): \(reason)",
            column: column)
    }

    static let poolClosed = PostgresError.client("pool closed")

    /// A statement refused before it was sent because its caller cancelled the use of the
    /// connection (``ConnectionPool/withConnection(cancellable:_:)``); SQLSTATE 57014 as the
    /// server's own cancel.
    static let cancelled = PostgresError(
        kind: .client, message: "the caller cancelled this use of the connection; the statement was not sent",
        sqlState: .queryCanceled)
}
