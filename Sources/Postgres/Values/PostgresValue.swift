/// A value bound to a `$n` placeholder: one entry of `paramValues`, `paramLengths`, `paramFormats`
/// and `paramTypes` given to `PQexecParams` / `PQsendQueryParams`.
public enum PostgresValue: Sendable, Hashable {
    /// Text format; the server infers the type from the statement. Must not contain U+0000.
    case text(String)
    /// Binary format, sent as `bytea` (type OID 17).
    case binary([UInt8])
    /// SQL NULL (a null `paramValues` entry).
    case null
}

/// A Swift value that can be bound as a statement parameter.
public protocol PostgresEncodable: Sendable {
    /// The parameter to send; throws `PostgresError` of kind `.encoding` when the value cannot be sent faithfully.
    func postgresValue() throws -> PostgresValue
}

/// A Swift value that can be read from a cell of a text-format result (`PQgetvalue`, `PQgetisnull`).
public protocol PostgresDecodable {
    /// Decodes a non-NULL cell from its text-format bytes (`PQgetvalue`, `PQgetlength`).
    /// - Parameters:
    ///   - postgresText: the cell's bytes, UTF-8, without a terminating NUL.
    ///   - type: the column's type OID (`PQftype`), for error messages and type-dependent parsing.
    ///   - column: the column name (`PQfname`), for error messages.
    init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws

    /// Decodes a NULL cell (`PQgetisnull`). The default throws a decoding error naming the column and type;
    /// `Optional` returns nil.
    init(postgresNullIn column: String, type: UInt32) throws
}

extension PostgresDecodable {
    /// Refuses NULL with a decoding error that names the column and the Swift type.
    public init(postgresNullIn column: String, type: UInt32) throws {
        throw PostgresError.decoding(column: column, type: type, as: Self.self, "the value is NULL; decode an Optional instead")
    }
}

extension PostgresValue: PostgresEncodable {
    /// The value itself.
    public func postgresValue() -> PostgresValue { self }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    /// `nil` binds SQL NULL; otherwise the wrapped value's parameter.
    public func postgresValue() throws -> PostgresValue {
        switch self {
        case .none: .null
        case .some(let wrapped): try wrapped.postgresValue()
        }
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    /// Decodes the wrapped type.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        self = try Wrapped(postgresText: postgresText, type: type, column: column)
    }

    /// NULL becomes nil.
    public init(postgresNullIn column: String, type: UInt32) throws {
        self = nil
    }
}
