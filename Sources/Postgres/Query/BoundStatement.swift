import CLibPQ

/// A statement checked and laid out for `PQexecParams` / `PQsendQueryParams`: its text as a C string and
/// every parameter in one contiguous NUL-separated buffer, so the pointers libpq reads stay valid for the call.
struct BoundStatement {
    /// The statement's text: with the parameter types, the key of its server-side preparation.
    private let text: String
    private let command: [CChar]
    private var storage: [UInt8] = []
    private var offsets: [Int?] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []
    private var types: [Oid] = []

    /// `bytea`, the type binary parameters are sent as.
    static let byteaOid: Oid = 17

    /// Throws the statement's stored encoding error, or `.encoding` when the text or a text parameter holds U+0000.
    init(_ sql: SQL) throws {
        if let error = sql.encodingError { throw error }
        text = sql.text
        command = try cString(sql.text, describing: "the SQL text")
        for (index, value) in sql.bindings.enumerated() {
            switch value {
            case .null:
                append(offset: nil, length: 0, format: 0, type: 0)
            case .text(let text):
                let offset = storage.count
                storage.append(contentsOf: text.utf8)
                guard !storage[offset...].contains(0) else { throw PostgresError.nul(in: "parameter $\(index + 1)") }
                storage.append(0)
                let length = storage.count - offset - 1
                guard length < Int32.max else { throw PostgresError.encoding("parameter $\(index + 1) is over 2 GB") }
                append(offset: offset, length: Int32(length), format: 0, type: 0)
            case .binary(let bytes):
                guard bytes.count < Int32.max else { throw PostgresError.encoding("parameter $\(index + 1) is over 2 GB") }
                let offset = storage.count
                storage.append(contentsOf: bytes)
                storage.append(0)  // keeps the buffer non-empty, so an empty bytea has a non-null pointer
                append(offset: offset, length: Int32(bytes.count), format: 1, type: Self.byteaOid)
            }
        }
    }

    private mutating func append(offset: Int?, length: Int32, format: Int32, type: Oid) {
        offsets.append(offset)
        lengths.append(length)
        formats.append(format)
        types.append(type)
    }

    /// `PQexecParams` with text-format results.
    func execute(on connection: OpaquePointer) -> OpaquePointer? {
        withArguments { PQexecParams(connection, $0, $1, $2, $3, $4, $5, 0) }
    }

    /// The cache key of the statement's server-side preparation: its text and parameter types,
    /// shared with the statement rather than copied into a new string on every call.
    var preparationKey: PreparationKey { PreparationKey(text: text, types: types) }

    /// `PQprepare` under `name`, with the parameter types of this execution.
    func prepare(_ name: String, on connection: OpaquePointer) -> OpaquePointer? {
        withArguments { command, count, types, _, _, _ in PQprepare(connection, name, command, count, types) }
    }

    /// `PQexecPrepared` of the statement prepared as `name`, with text-format results.
    func executePrepared(_ name: String, on connection: OpaquePointer) -> OpaquePointer? {
        withArguments { _, count, _, values, lengths, formats in
            PQexecPrepared(connection, name, count, values, lengths, formats, 0)
        }
    }

    /// `PQsendQueryPrepared` of the statement prepared as `name`; false when libpq refused to queue it.
    func sendPrepared(_ name: String, on connection: OpaquePointer) -> Bool {
        withArguments { _, count, _, values, lengths, formats in
            PQsendQueryPrepared(connection, name, count, values, lengths, formats, 0)
        } == 1
    }

    /// `PQsendQueryParams` with text-format results; false when libpq refused to queue it.
    func send(on connection: OpaquePointer) -> Bool {
        withArguments { PQsendQueryParams(connection, $0, $1, $2, $3, $4, $5, 0) } == 1
    }

    private func withArguments<R>(
        _ body: (
            UnsafePointer<CChar>, Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?,
            UnsafePointer<Int32>?, UnsafePointer<Int32>?
        ) -> R
    ) -> R {
        storage.withUnsafeBytes { bytes in
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.map { bytes.baseAddress!.advanced(by: $0).assumingMemoryBound(to: CChar.self) }
            }
            return command.withUnsafeBufferPointer { command in
                values.withUnsafeBufferPointer { values in
                    types.withUnsafeBufferPointer { types in
                        lengths.withUnsafeBufferPointer { lengths in
                            formats.withUnsafeBufferPointer { formats in
                                body(
                                    command.baseAddress!, Int32(values.count), types.baseAddress, values.baseAddress,
                                    lengths.baseAddress, formats.baseAddress)
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What a connection prepares a statement once for: its text and its parameters' types (a
/// binary parameter is sent as `bytea`, a text one leaves its type to the server).
struct PreparationKey: Hashable {
    let text: String
    let types: [Oid]
}

/// The NUL-terminated UTF-8 of `text`; throws `.encoding` rather than letting libpq truncate at a U+0000.
func cString(_ text: String, describing what: String) throws -> [CChar] {
    guard !text.utf8.contains(0) else { throw PostgresError.nul(in: what) }
    return Array(text.utf8CString)
}
