import Foundation
import Postgres

/// A price, exact: kept as the decimal text it was given ("1.10" stays "1.10"), never through a
/// binary float. Non-negative.
public struct Price: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The canonical decimal text: digits, optionally a point and more digits.
    public let text: String

    /// A price from decimal text: `digits[.digits]`, or a JSON number literal with an exponent
    /// (`1.5e2`), which is written out as plain decimal text. `nil` for anything else, and for
    /// negative values. Negative zero (`-0`, `"-0.00"`) equals zero and is read as zero, its
    /// sign dropped and its scale kept (`0`, `0.00`).
    public init?(_ literal: String) {
        if literal.utf8.first == UInt8(ascii: "-") {
            guard let text = Price.canonical(String(decoding: literal.utf8.dropFirst(), as: UTF8.self)),
                  Price.isZero(text) else { return nil }
            self.text = text
            return
        }
        guard let text = Price.canonical(literal) else { return nil }
        self.text = text
    }

    /// A price from a Foundation `Decimal` (its plain decimal text).
    public init?(_ decimal: Decimal) {
        self.init(decimal.description)
    }

    public init(stringLiteral value: String) {
        guard let price = Price(value) else { preconditionFailure("not a price: \(value)") }
        self = price
    }

    /// The value as a Foundation `Decimal`, for arithmetic.
    public var decimal: Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? 0 }

    public var description: String { text }

    /// Whether canonical decimal text is zero (`0`, `0.000`).
    static func isZero(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: ".") }
    }

    /// Normalises a JSON number literal to plain decimal text, keeping every digit and the scale.
    static func canonical(_ literal: String) -> String? {
        var bytes = Array(literal.utf8)
        guard !bytes.isEmpty, bytes.count <= 128 else { return nil }
        var exponent = 0
        if let e = bytes.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            guard let value = Int(String(decoding: bytes[(e + 1)...], as: UTF8.self)), abs(value) <= 64 else { return nil }
            exponent = value
            bytes.removeSubrange(e...)
        }
        var integer = bytes
        var fraction: [UInt8] = []
        if let dot = bytes.firstIndex(of: UInt8(ascii: ".")) {
            integer = Array(bytes[..<dot])
            fraction = Array(bytes[(dot + 1)...])
            guard !fraction.isEmpty else { return nil }
        }
        let isDigit = { (b: UInt8) in b >= 48 && b <= 57 }
        guard !integer.isEmpty, integer.allSatisfy(isDigit), fraction.allSatisfy(isDigit) else { return nil }
        guard integer.count == 1 || integer.first != UInt8(ascii: "0") else { return nil }
        if exponent > 0 {
            let moved = min(exponent, fraction.count)
            integer += fraction.prefix(moved)
            fraction.removeFirst(moved)
            integer += Array(repeating: UInt8(ascii: "0"), count: exponent - moved)
        } else if exponent < 0 {
            let moved = min(-exponent, integer.count)
            fraction = Array(integer.suffix(moved)) + fraction
            integer.removeLast(moved)
            fraction = Array(repeating: UInt8(ascii: "0"), count: -exponent - moved) + fraction
        }
        while integer.count > 1, integer.first == UInt8(ascii: "0") { integer.removeFirst() }
        if integer.isEmpty { integer = [UInt8(ascii: "0")] }
        let text = String(decoding: integer, as: UTF8.self)
        return fraction.isEmpty ? text : text + "." + String(decoding: fraction, as: UTF8.self)
    }
}

extension Price: PostgresEncodable {
    public func postgresValue() throws -> PostgresValue { .text(text) }
}
