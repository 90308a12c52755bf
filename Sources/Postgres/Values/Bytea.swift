/// `[UInt8]` is `bytea`: bound in binary format, read from the server's hex output (`\x0aff…`).
extension Array: PostgresEncodable where Element == UInt8 {
    /// Binds the bytes in binary format as `bytea`; every byte value, including 0, is sent as is.
    public func postgresValue() -> PostgresValue { .binary(self) }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// Decodes `bytea` in hex output format (`bytea_output = hex`, the default).
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        func failure(_ reason: String) -> PostgresError {
            .decoding(column: column, type: type, as: [UInt8].self, reason)
        }
        guard postgresText.count >= 2, postgresText[0] == UInt8(ascii: "\\"), postgresText[1] == UInt8(ascii: "x"),
            postgresText.count % 2 == 0
        else { throw failure("expected bytea hex output (\\x...)") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(postgresText.count / 2 - 1)
        var index = 2
        while index < postgresText.count {
            guard let high = hexValue(postgresText[index]), let low = hexValue(postgresText[index + 1]) else {
                throw failure("invalid hex digit")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        self = bytes
    }
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
}
