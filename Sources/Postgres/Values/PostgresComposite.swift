/// A row value bound as one parameter: the text form of a composite type, `(f1,f2,…)`, which the
/// server reads with the type the statement casts it to (`$1::ledger.command`). Each field is
/// written quoted (a backslash or a double quote escaped), `nil` as an empty field (NULL); a
/// binary value (`bytea`) in its hex text form.
///
/// ```swift
/// let row = try PostgresComposite(["consume", nil, 42])
/// let sql: SQL = "SELECT (\(row)::my_type).kind"
/// ```
public struct PostgresComposite: PostgresEncodable, Hashable {
    /// The fields, in the type's column order.
    public var fields: [PostgresValue]

    public init(fields: [PostgresValue]) {
        self.fields = fields
    }

    /// Encodes each value (throws the first one's encoding error).
    public init(_ values: [(any PostgresEncodable)?]) throws {
        fields = try values.map { try $0?.postgresValue() ?? .null }
    }

    public func postgresValue() -> PostgresValue {
        .text(CompositeText.join(fields, open: "(", close: ")", null: ""))
    }
}

/// A one-dimensional array bound as one parameter: the text form `{e1,e2,…}`, read with the type
/// the statement casts it to (`$1::text[]`, `$1::ledger.command[]`). Each element is written
/// quoted, `nil` as `NULL`; a binary value (`bytea`) in its hex text form; a composite as its
/// row text, quoted.
public struct PostgresArray: PostgresEncodable, Hashable {
    public var elements: [PostgresValue]

    public init(elements: [PostgresValue]) {
        self.elements = elements
    }

    /// Encodes each value (throws the first one's encoding error).
    public init(_ values: [(any PostgresEncodable)?]) throws {
        elements = try values.map { try $0?.postgresValue() ?? .null }
    }

    public func postgresValue() -> PostgresValue {
        .text(CompositeText.join(elements, open: "{", close: "}", null: "NULL"))
    }
}

/// The text forms of rows and arrays, written as UTF-8 bytes: both quote each value the same way
/// (`"…"`, each `\` and `"` escaped by a backslash) and differ only in their brackets and in how
/// they write NULL.
enum CompositeText {
    static func join(_ values: [PostgresValue], open: Unicode.Scalar, close: Unicode.Scalar, null: String) -> String {
        var out: [UInt8] = [UInt8(ascii: open)]
        out.reserveCapacity(values.reduce(2) { $0 + size($1) })
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            switch value {
            case .null: out += null.utf8
            case .text(let text): quote(text.utf8, into: &out)
            case .binary(let bytes): quote(hex(bytes), into: &out)
            }
        }
        out.append(UInt8(ascii: close))
        return String(decoding: out, as: UTF8.self)
    }

    /// An upper bound of a value's quoted size, for the buffer's capacity.
    private static func size(_ value: PostgresValue) -> Int {
        switch value {
        case .null: 5
        case .text(let text): 2 * text.utf8.count + 3
        case .binary(let bytes): 2 * bytes.count + 5
        }
    }

    private static func quote(_ bytes: some Sequence<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `bytea`'s hex text form, `\x…`.
    private static func hex(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        out.reserveCapacity(2 + 2 * bytes.count)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return out
    }
}
