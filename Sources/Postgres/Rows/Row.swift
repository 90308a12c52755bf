/// One row of `Rows`; decode its cells by column name or position.
public struct Row: Sendable {
    let storage: Rows.Storage
    let index: Int

    /// Column names in order (`PQfname`).
    public var columns: [String] { storage.columns }

    /// Decodes the cell of the first column named `column`.
    /// Throws `.decoding` naming the column, the Swift type and the server type OID when it does not fit
    /// (including NULL into a non-optional type).
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let position = storage.columnIndex[column] else {
            throw PostgresError(
                kind: .decoding, message: "no column named \"\(column)\" (columns: \(columns.joined(separator: ", ")))",
                column: column)
        }
        return try decode(position, as: type)
    }

    /// Decodes the cell at a zero-based column position.
    public func decode<T: PostgresDecodable>(_ column: Int, as type: T.Type = T.self) throws -> T {
        guard columns.indices.contains(column) else {
            throw PostgresError(kind: .decoding, message: "no column at position \(column) (\(columns.count) columns)")
        }
        let name = columns[column]
        let oid = storage.types[column]
        guard let range = storage.cells[index * columns.count + column] else {
            return try T(postgresNullIn: name, type: oid)
        }
        return try storage.bytes.withUnsafeBufferPointer {
            try T(postgresText: UnsafeBufferPointer(rebasing: $0[range]), type: oid, column: name)
        }
    }

    /// True when the cell of the first column named `column` is SQL NULL (`PQgetisnull`); false for unknown names.
    public func isNull(_ column: String) -> Bool {
        guard let position = storage.columnIndex[column] else { return false }
        return storage.cells[index * columns.count + position] == nil
    }
}
