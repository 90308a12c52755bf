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

    public func postgresValue() throws -> PostgresValue {
        var text = "("
        for (index, field) in fields.enumerated() {
            if index > 0 { text += "," }
            switch field {
            case .null: break
            case .text(let value): PostgresComposite.quote(value, into: &text)
            case .binary(let bytes): PostgresComposite.quote(PostgresComposite.hex(bytes), into: &text)
            }
        }
        text += ")"
        return .text(text)
    }

    /// `"value"`, with each `\` and `"` escaped by a backslash: how both a row's field and an
    /// array's element are quoted.
    static func quote(_ value: String, into text: inout String) {
        text += "\""
        for character in value.unicodeScalars {
            if character == "\\" || character == "\"" { text += "\\" }
            text.unicodeScalars.append(character)
        }
        text += "\""
    }

    /// `bytea`'s hex text form, `\x…`.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        out.reserveCapacity(2 + 2 * bytes.count)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
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

    public func postgresValue() throws -> PostgresValue {
        var text = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { text += "," }
            switch element {
            case .null: text += "NULL"
            case .text(let value): PostgresComposite.quote(value, into: &text)
            case .binary(let bytes): PostgresComposite.quote(PostgresComposite.hex(bytes), into: &text)
            }
        }
        text += "}"
        return .text(text)
    }
}
