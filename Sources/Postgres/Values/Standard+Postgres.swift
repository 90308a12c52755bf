/// Conformances of the standard library's scalar types. Integers and floats are bound as text
/// and decoded from the server's text output.

extension String: PostgresEncodable, PostgresDecodable {
    /// Binds the text; a string containing U+0000 throws `.encoding` rather than being truncated by libpq.
    public func postgresValue() throws -> PostgresValue {
        guard !utf8.contains(0) else { throw PostgresError.nul(in: "a text parameter") }
        return .text(self)
    }

    /// The cell's UTF-8 text (the session uses `client_encoding = UTF8`).
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) {
        self = String(decoding: postgresText, as: UTF8.self)
    }
}

extension Substring: PostgresEncodable {
    /// Binds like `String`.
    public func postgresValue() throws -> PostgresValue { try String(self).postgresValue() }
}

extension Int: PostgresEncodable, PostgresDecodable {
    /// Binds the decimal text.
    public func postgresValue() -> PostgresValue { .text(String(self)) }
    /// Parses `int2`, `int4`, `int8` (or any integer text).
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        self = try parseInteger(postgresText, type: type, column: column)
    }
}

extension Int64: PostgresEncodable, PostgresDecodable {
    /// Binds the decimal text.
    public func postgresValue() -> PostgresValue { .text(String(self)) }
    /// Parses `int2`, `int4`, `int8` (or any integer text).
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        self = try parseInteger(postgresText, type: type, column: column)
    }
}

extension Int32: PostgresEncodable, PostgresDecodable {
    /// Binds the decimal text.
    public func postgresValue() -> PostgresValue { .text(String(self)) }
    /// Parses integer text; values outside `Int32` are a decoding error.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        self = try parseInteger(postgresText, type: type, column: column)
    }
}

extension Int16: PostgresEncodable, PostgresDecodable {
    /// Binds the decimal text.
    public func postgresValue() -> PostgresValue { .text(String(self)) }
    /// Parses integer text; values outside `Int16` are a decoding error.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        self = try parseInteger(postgresText, type: type, column: column)
    }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    /// Binds `t` or `f`.
    public func postgresValue() -> PostgresValue { .text(self ? "t" : "f") }
    /// Reads the server's `t` / `f`.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        switch Array(postgresText) {
        case [UInt8(ascii: "t")]: self = true
        case [UInt8(ascii: "f")]: self = false
        default: throw PostgresError.decoding(column: column, type: type, as: Bool.self, "expected t or f")
        }
    }
}

extension Double: PostgresEncodable, PostgresDecodable {
    /// Binds the shortest text that round-trips (`Infinity`, `-Infinity`, `NaN` spelled as PostgreSQL does).
    /// For money use `PostgresNumeric`.
    public func postgresValue() -> PostgresValue {
        if isNaN { return .text("NaN") }
        if isInfinite { return .text(self < 0 ? "-Infinity" : "Infinity") }
        return .text(description)
    }
    /// Parses `float4` / `float8` text (exact with `extra_float_digits = 3`).
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        guard let value = Double(String(decoding: postgresText, as: UTF8.self)) else {
            throw PostgresError.decoding(column: column, type: type, as: Double.self, "not a floating-point number")
        }
        self = value
    }
}

private func parseInteger<T: FixedWidthInteger>(
    _ text: UnsafeBufferPointer<UInt8>, type: UInt32, column: String
) throws -> T {
    guard let value = T(String(decoding: text, as: UTF8.self)) else {
        throw PostgresError.decoding(column: column, type: type, as: T.self, "not an integer, or out of range")
    }
    return value
}
