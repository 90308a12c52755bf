import CLibPQ

extension Connection {
    /// The size at which buffered COPY data is handed to `PQputCopyData`.
    static let copyChunkSize = 64 * 1024

    /// Streams rows into a `COPY table (columns) FROM STDIN` statement (text format) and returns the number of
    /// rows copied (`PQcmdTuples`).
    ///
    /// Each value is escaped for COPY's text format (backslash, tab, newline and carriage return), `nil` is
    /// sent as `\N`, and the data goes through `PQputCopyData` in chunks of about 64 KiB, then `PQputCopyEnd`.
    /// A value containing U+0000 aborts the COPY (nothing is copied) and throws `.encoding`.
    @discardableResult
    public func copyFrom(unsafeSQL copyStatement: String, rows: some Sequence<[String?]>) throws -> Int {
        let handle = try usableHandle()
        let command = try cString(copyStatement, describing: "the COPY statement")
        guard let start = PQexec(handle, command) else { throw failure(handle, fallback: "no result from the server") }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            _ = try consumeResult(start, handle)  // clears the result; throws the server's error if there is one
            throw PostgresError.client("copyFrom needs a COPY … FROM STDIN statement")
        }
        PQclear(start)

        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.copyChunkSize + 1024)
        for row in rows {
            for (index, value) in row.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: "\t")) }
                guard let value else {
                    buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
                    continue
                }
                guard Self.appendEscaped(value, to: &buffer) else {
                    _ = PQputCopyEnd(handle, "the client refused a value containing U+0000")
                    _ = try? finishCopy(handle)
                    throw PostgresError.nul(in: "a COPY value")
                }
            }
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count >= Self.copyChunkSize {
                try putCopyData(buffer, handle)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !buffer.isEmpty { try putCopyData(buffer, handle) }
        guard PQputCopyEnd(handle, nil) == 1 else { throw failure(handle, fallback: "could not end the COPY") }
        return try finishCopy(handle)
    }

    /// COPY text-format escaping; false when the value holds U+0000, which COPY text cannot carry.
    private static func appendEscaped(_ value: String, to buffer: inout [UInt8]) -> Bool {
        for byte in value.utf8 {
            switch byte {
            case 0: return false
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            default: buffer.append(byte)
            }
        }
        return true
    }

    /// `PQputCopyData` (blocking mode: waits until libpq has taken the data).
    private func putCopyData(_ data: [UInt8], _ handle: OpaquePointer) throws {
        let sent = data.withUnsafeBytes {
            PQputCopyData(handle, $0.baseAddress!.assumingMemoryBound(to: CChar.self), Int32($0.count))
        }
        guard sent == 1 else { throw failure(handle, fallback: "could not send COPY data") }
    }

    /// Reads every result after `PQputCopyEnd` (`PQgetResult`); returns the rows copied or throws the COPY's error.
    private func finishCopy(_ handle: OpaquePointer) throws -> Int {
        var outcome: Result<Rows, PostgresError>?
        while let result = PQgetResult(handle) {
            if outcome == nil { outcome = self.outcome(of: result, PQresultStatus(result)) }
            PQclear(result)
        }
        guard let outcome else { throw failure(handle, fallback: "no result after COPY") }
        return try outcome.get().affectedRows
    }
}
