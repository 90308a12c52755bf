/// A statement whose interpolated values become bound parameters, never SQL text.
///
/// ```swift
/// let sql: SQL = "SELECT id FROM purchases WHERE user_id = \(userID) AND token = \(token)"
/// // sql.text == "SELECT id FROM purchases WHERE user_id = $1 AND token = $2"
/// ```
/// Raw text enters only through the loud doors `SQL(unsafeSQL:)` and `\(unsafeSQL:)`; names through
/// `\(identifier:)`; another `SQL` value (a fragment, such as a list from `joined(separator:)`)
/// through `\(fragment)`, its placeholders renumbered. A value that fails to encode is remembered
/// and thrown when the statement runs.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement text with `$1`, `$2`, … placeholders (the `command` of `PQexecParams`).
    public private(set) var text: String
    /// The encoded parameters, in placeholder order.
    public private(set) var bindings: [PostgresValue]
    /// The first interpolated value that could not be encoded; thrown at execution.
    private(set) var encodingError: PostgresError?
    /// Where each placeholder `$n` starts in `text` (UTF-8 offsets), in order, so that the
    /// statement can be embedded in another with its placeholders renumbered.
    private(set) var placeholderOffsets: [Int] = []

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
        self.placeholderOffsets = stringInterpolation.placeholderOffsets
    }

    /// The statement text only; bound values are never shown.
    public var description: String { text }

    /// Builds `text` and `bindings` from a literal's segments.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        var bindings: [PostgresValue] = []
        var encodingError: PostgresError?
        var placeholderOffsets: [Int] = []

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

        /// Appends another statement's text, its bound values bound after the ones so far (its
        /// placeholders renumbered): `"LOCK TABLE \(tables.joined(separator: ", "))"`.
        public mutating func appendInterpolation(_ fragment: SQL) {
            if let error = fragment.encodingError { record(error) }
            let utf8 = fragment.text.utf8
            var copied = utf8.startIndex
            for (index, offset) in fragment.placeholderOffsets.enumerated() {
                let start = utf8.index(utf8.startIndex, offsetBy: offset)
                text += fragment.text[copied..<start]
                placeholderOffsets.append(text.utf8.count)
                text += "$\(bindings.count + index + 1)"
                copied = utf8.index(start, offsetBy: "$\(index + 1)".utf8.count)
            }
            text += fragment.text[copied...]
            bindings += fragment.bindings
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
            placeholderOffsets.append(text.utf8.count)
            text += "$\(bindings.count)"
        }

        private mutating func record(_ error: PostgresError) {
            if encodingError == nil { encodingError = error }
        }
    }
}

extension Sequence<SQL> {
    /// The fragments one after another, `separator` (constant SQL text such as `", "` or
    /// `" AND "`) between them; bound values keep their order.
    public func joined(separator: String) -> SQL {
        var joined = SQL.StringInterpolation(literalCapacity: 0, interpolationCount: 0)
        for (index, fragment) in enumerated() {
            if index > 0 { joined.appendLiteral(separator) }
            joined.appendInterpolation(fragment)
        }
        return SQL(stringInterpolation: joined)
    }
}
