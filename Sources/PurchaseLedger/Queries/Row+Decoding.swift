import Postgres

extension Row {
    /// Decodes a text column into a string-backed enum, naming the column when the value is unknown.
    func decodeEnum<T: RawRepresentable>(_ column: String, as type: T.Type = T.self) throws -> T where T.RawValue == String {
        let text = try decode(column, as: String.self)
        guard let value = T(rawValue: text) else {
            throw PostgresError(kind: .decoding, message: "column \(column): unexpected value \"\(text)\" for \(T.self)")
        }
        return value
    }
}

extension Connection {
    /// A stored price (numeric, never negative) as a `Price`.
    static func price(_ numeric: PostgresNumeric) throws -> Price {
        guard let price = Price(numeric.text) else {
            throw PostgresError(kind: .decoding, message: "column price: \(numeric.text) is not a price")
        }
        return price
    }
}
