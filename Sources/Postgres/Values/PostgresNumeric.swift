import Foundation

/// An exact `numeric` kept as its decimal text, so `1.10` stays `1.10` and
/// `12345678901234567890.123456789` keeps every digit. Never converted through `Double`.
///
/// Equality compares the text, so `1.10` and `1.1` differ (as their scales do in PostgreSQL).
public struct PostgresNumeric: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The decimal text: `[-]digits[.digits]` (or `NaN` when made from `Decimal.nan`).
    public private(set) var text: String

    /// Accepts `[-]digits[.digits]`; returns nil for anything else (exponents, `NaN`, `Infinity`, blanks).
    public init?(_ text: String) {
        guard Self.isPlainDecimal(text) else { return nil }
        self.text = text
    }

    /// A numeric literal such as `"19.99"`; an invalid literal is a programming error and traps.
    public init(stringLiteral value: String) {
        guard let numeric = Self(value) else { preconditionFailure("\"\(value)\" is not a [-]digits[.digits] literal") }
        self = numeric
    }

    /// The exact text of a `Decimal` (plain notation, POSIX decimal point). `Decimal.nan` becomes `NaN`,
    /// which PostgreSQL's `numeric` accepts.
    public init(_ decimal: Decimal) {
        var value = decimal
        self.text = NSDecimalString(&value, Locale(identifier: "en_US_POSIX"))
    }

    /// The value as a Foundation `Decimal`, or nil when `Decimal` (38 significant digits) cannot hold it exactly.
    public var decimal: Decimal? {
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
            Self.canonical(PostgresNumeric(value).text) == Self.canonical(text)
        else { return nil }
        return value
    }

    /// The decimal text.
    public var description: String { text }

    static func isPlainDecimal(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        return parts.count <= 2
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }
    }

    /// Leading integer zeros and trailing fraction zeros removed, `-0` as `0`: equal values, equal text.
    private static func canonical(_ text: String) -> String {
        var digits = Substring(text)
        let negative = digits.hasPrefix("-")
        if negative { digits = digits.dropFirst() }
        var (integer, fraction) = (digits, Substring(""))
        if let dot = digits.firstIndex(of: ".") {
            (integer, fraction) = (digits[..<dot], digits[digits.index(after: dot)...])
        }
        integer = integer.drop { $0 == "0" }
        while fraction.last == "0" { fraction = fraction.dropLast() }
        let magnitude = (integer.isEmpty ? "0" : String(integer)) + (fraction.isEmpty ? "" : "." + fraction)
        return negative && magnitude != "0" ? "-" + magnitude : magnitude
    }
}

extension PostgresNumeric: PostgresEncodable, PostgresDecodable {
    /// Binds the exact text; write `$1::numeric` where the type is not inferred.
    public func postgresValue() -> PostgresValue { .text(text) }

    /// Reads `numeric` text output exactly; `NaN` and `Infinity` are decoding errors.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        guard let value = PostgresNumeric(String(decoding: postgresText, as: UTF8.self)) else {
            throw PostgresError.decoding(column: column, type: type, as: PostgresNumeric.self, "not a finite decimal")
        }
        self = value
    }
}

extension Decimal: PostgresEncodable, PostgresDecodable {
    /// Binds the exact decimal text (via `PostgresNumeric`).
    public func postgresValue() -> PostgresValue { PostgresNumeric(self).postgresValue() }

    /// Reads `numeric` text via `PostgresNumeric`; a value `Decimal` cannot hold exactly is a decoding error.
    public init(postgresText: UnsafeBufferPointer<UInt8>, type: UInt32, column: String) throws {
        let numeric = try PostgresNumeric(postgresText: postgresText, type: type, column: column)
        guard let value = numeric.decimal else {
            throw PostgresError.decoding(column: column, type: type, as: Decimal.self, "more digits than Decimal holds")
        }
        self = value
    }
}
