/// A JSON value as it was written, without loss.
///
/// Numbers keep their literal text (`"1.10"`, `"-0"`, `"1e400"`), so a price
/// never passes through a binary floating-point type. Objects keep their
/// fields in input order, repeated keys included (see ``JSONObject``).
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its literal text exactly as written in the input.
    case number(String)
    /// A string, with escapes resolved. May contain U+0000.
    case string(String)
    /// An array, in input order.
    case array([JSONValue])
    /// An object, with its fields in input order.
    case object(JSONObject)
}

extension JSONValue {
    /// The string, when this is a `.string`; otherwise `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number literal exactly as written, when this is a `.number`; otherwise `nil`.
    public var numberValue: String? {
        if case .number(let literal) = self { return literal }
        return nil
    }

    /// The value as an `Int64` when this is a `.number` written as a plain
    /// integer (`-?[0-9]+`, no fraction, no exponent) that fits; otherwise `nil`.
    ///
    /// `"12"` gives 12; `"12.0"`, `"1e2"` and `"99999999999999999999"` give `nil`.
    public var int64Value: Int64? {
        guard case .number(let literal) = self else { return nil }
        // Int64(_: String) accepts a leading "+", which JSON numbers never have;
        // it refuses ".", "e" and out-of-range values, which is what we want.
        return Int64(literal)
    }

    /// The object, when this is an `.object`; otherwise `nil`.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an `.array`; otherwise `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The boolean, when this is a `.bool`; otherwise `nil`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON type's name for messages: `"string"`, `"number"`, `"object"`,
    /// `"array"`, `"boolean"` or `"null"`.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}
