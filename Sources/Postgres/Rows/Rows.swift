import CLibPQ

/// The rows of one statement, copied out of its `PGresult` (which is cleared right after).
///
/// Cells stay as the server's text-format bytes until `Row.decode` reads them.
public struct Rows: Sendable, RandomAccessCollection {
    /// Column names in order (`PQfname`).
    public let columns: [String]
    /// Rows inserted, updated, deleted, copied or selected (`PQcmdTuples`); 0 when the command reports none.
    public var affectedRows: Int
    /// The command tag, for example `INSERT 0 1` or `COMMIT` (`PQcmdStatus`).
    public let commandTag: String
    let storage: Storage

    /// The first row's index, 0.
    public var startIndex: Int { 0 }
    /// The number of rows (`PQntuples`).
    public var endIndex: Int { storage.rowCount }
    /// The row at `position`.
    public subscript(position: Int) -> Row {
        precondition(indices.contains(position), "row index \(position) out of range 0..<\(count)")
        return Row(storage: storage, index: position)
    }

    /// Copies every cell of a successful `PGresult` (`PQntuples`, `PQnfields`, `PQftype`, `PQgetvalue`, `PQgetlength`, `PQgetisnull`).
    init(result: OpaquePointer) {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        columns = (0..<columnCount).map { String(cString: PQfname(result, Int32($0))) }
        let types = (0..<columnCount).map { PQftype(result, Int32($0)) }
        var bytes: [UInt8] = []
        var cells: [Range<Int>?] = []
        cells.reserveCapacity(rowCount * columnCount)
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(result, row, column) == 1 {
                    cells.append(nil)
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                let value = UnsafeRawPointer(PQgetvalue(result, row, column)!).assumingMemoryBound(to: UInt8.self)
                cells.append(bytes.count..<bytes.count + length)
                bytes.append(contentsOf: UnsafeBufferPointer(start: value, count: length))
            }
        }
        storage = Storage(columns: columns, types: types, rowCount: rowCount, bytes: bytes, cells: cells)
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
        commandTag = String(cString: PQcmdStatus(result))
    }

    /// Immutable cell storage shared by the `Rows` and each `Row`.
    final class Storage: Sendable {
        let columns: [String]
        let types: [UInt32]
        let rowCount: Int
        let bytes: [UInt8]
        /// `rowCount × columns.count` ranges into `bytes`, row-major; nil is SQL NULL.
        let cells: [Range<Int>?]
        let columnIndex: [String: Int]

        init(columns: [String], types: [UInt32], rowCount: Int, bytes: [UInt8], cells: [Range<Int>?]) {
            self.columns = columns
            self.types = types
            self.rowCount = rowCount
            self.bytes = bytes
            self.cells = cells
            // The first column of a name wins, as in SQL's own name resolution for `SELECT a, a`.
            self.columnIndex = Dictionary(columns.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }
}
