/// A statement whose interpolated values become bound parameters, never SQL text.
///
/// ```swift
/// let sql: SQL = "SELECT id FROM purchases WHERE user_id = \(userID) AND token = \(token)"
/// // sql.text == "SELECT id FROM purchases WHERE user_id = $1 AND token = $2"
/// ```
/// Raw text enters only through the loud doors `SQL(unsafeSQL:)` and `\(unsafeSQL:)`; names through
/// `\(identifier:)`. A value that fails to encode is remembered and thrown when the statement runs.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement text with `$1`, `$2`, … placeholders (the `command` of `PQexecParams`).
    public private(set) var text: String
    /// The encoded parameters, in placeholder order.
    public private(set) var bindings: [PostgresValue]
    /// The first interpolated value that could not be encoded; thrown at execution.
    private(set) var encodingError: PostgresError?

    /// Constant SQL text, used as is. Never build this text from input: interpolate values instead.
    public init(unsafeSQL: String) {
        self.text = unsafeSQL
        self.bindings = []
    }

    /// A literal without interpolations.
    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    /// A literal with interpolations.
    public init(stringInterpolation: StringInterpolation) {
        self.text = stringInterpolation.text
        self.bindings = stringInterpolation.bindings
        self.encodingError = stringInterpolation.encodingError
    }

    /// The statement text only; bound values are never shown.
    public var description: String { text }

    /// Builds `text` and `bindings` from a literal's segments.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        var bindings: [PostgresValue] = []
        var encodingError: PostgresError?

        /// Reserves room for the text.
        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 3 * interpolationCount)
        }

        /// Appends literal SQL text.
        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Binds a value and appends its placeholder `$n`.
        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            bind(value)
        }

        /// Binds an optional value: `nil` binds NULL. (An explicit overload, so optionals interpolate without warnings.)
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            bind(value)
        }

        /// Appends raw SQL text, unquoted and unescaped. Only for constants.
        public mutating func appendInterpolation(unsafeSQL: String) {
            text += unsafeSQL
        }

        /// Appends a double-quoted identifier (table, column, schema or database name), doubling inner quotes.
        public mutating func appendInterpolation(identifier: String) {
            if identifier.utf8.contains(0) { record(.nul(in: "an identifier")) }
            text += "\"" + identifier.replacing("\"", with: "\"\"") + "\""
        }

        private mutating func bind(_ value: some PostgresEncodable) {
            do {
                bindings.append(try value.postgresValue())
            } catch {
                bindings.append(.null)
                record(
                    error as? PostgresError
                        ?? .encoding("a \(type(of: value)) parameter could not be encoded (\(type(of: error)))"))
            }
            text += "$\(bindings.count)"
        }

        private mutating func record(_ error: PostgresError) {
            if encodingError == nil { encodingError = error }
        }
    }
}
