import Foundation
import LedgerJSON

/// Reads the fields of one JSON command, under their contract names or the SDKs' aliases, and
/// turns every problem into a `LedgerError` that names the field.
struct FieldReader {
    let object: JSONObject
    /// Prefix for field names in messages, e.g. `purchases[2].`.
    let path: String

    init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    /// The first of `names` that is present and not null, with the name it was found under.
    func value(_ names: [String]) -> (name: String, value: JSONValue)? {
        for name in names {
            if let value = object[name], !value.isNull { return (name, value) }
        }
        return nil
    }

    func field(_ name: String) -> String { path + name }

    func invalid(_ name: String, _ problem: String) -> LedgerError {
        LedgerError.invalid(field(name), problem)
    }

    func optionalString(_ names: String..., maxLength: Int) throws(LedgerError) -> String? {
        try optionalString(names, maxLength: maxLength)
    }

    /// A text field of the rules (`FieldRules`), under its name or an alias.
    func optionalString(_ rule: FieldRule) throws(LedgerError) -> String? {
        try optionalString(rule.names, maxLength: rule.maxLength ?? Int.max)
    }

    private func optionalString(_ names: [String], maxLength: Int) throws(LedgerError) -> String? {
        guard let (name, value) = value(names) else { return nil }
        guard case .string(let text) = value else {
            throw invalid(name, "expected a string, got \(value.typeName)")
        }
        if let problem = Self.textProblem(text, maxLength: maxLength) { throw invalid(name, problem) }
        return text
    }

    func string(_ names: String..., maxLength: Int) throws(LedgerError) -> String {
        try string(names, maxLength: maxLength)
    }

    /// A required text field of the rules (`FieldRules`), under its name or an alias.
    func string(_ rule: FieldRule) throws(LedgerError) -> String {
        try string(rule.names, maxLength: rule.maxLength ?? Int.max)
    }

    private func string(_ names: [String], maxLength: Int) throws(LedgerError) -> String {
        guard let (name, value) = value(names) else { throw invalid(names[0], "missing") }
        guard case .string(let text) = value else {
            throw invalid(name, "expected a string, got \(value.typeName)")
        }
        if let problem = Self.textProblem(text, maxLength: maxLength) { throw invalid(name, problem) }
        return text
    }

    /// What breaks the contract's rule for a text field, or nil: 1 to `maxLength` characters
    /// (Unicode scalars), without U+0000 (libpq cannot send it in a text parameter: refuse the
    /// line rather than fail the batch).
    static func textProblem(_ text: String, maxLength: Int) -> String? {
        let length = text.unicodeScalars.count
        if length < 1 { return "must not be empty" }
        if length > maxLength { return "longer than \(maxLength) characters" }
        if text.unicodeScalars.contains("\u{0}") { return "contains U+0000" }
        return nil
    }

    /// A string that may hold any Unicode, U+0000 included (a payload), of at most the rule's
    /// `maxBytes` bytes of UTF-8.
    func rawString(_ rule: FieldRule) throws(LedgerError) -> String? {
        guard let (name, value) = value(rule.names) else { return nil }
        guard case .string(let text) = value else {
            throw invalid(name, "expected a string, got \(value.typeName)")
        }
        if let maxBytes = rule.maxBytes, text.utf8.count > maxBytes {
            throw invalid(name, "longer than \(maxBytes) bytes of UTF-8")
        }
        return text
    }

    /// A boolean field of the rules; absent or null is the rule's default (false).
    func bool(_ rule: FieldRule) throws(LedgerError) -> Bool {
        guard let (name, value) = value(rule.names) else { return rule.defaultValue?.boolValue ?? false }
        guard case .bool(let flag) = value else {
            throw invalid(name, "expected true or false, got \(value.typeName)")
        }
        return flag
    }

    func int64(_ names: String...) throws(LedgerError) -> Int64? {
        try int64(names)
    }

    /// An integer field of the rules, under its name or an alias.
    func int64(_ rule: FieldRule) throws(LedgerError) -> Int64? {
        try int64(rule.names)
    }

    private func int64(_ names: [String]) throws(LedgerError) -> Int64? {
        guard let (name, value) = value(names) else { return nil }
        guard case .number(let literal) = value, let number = Int64(literal) else {
            throw invalid(name, "expected an integer, got \(value.typeName == "number" ? "a number out of range" : value.typeName)")
        }
        return number
    }

    func store(_ rule: FieldRule = FieldRules.payment("storeCode")) throws(LedgerError) -> StoreCode {
        let text = try string([rule.field], maxLength: rule.maxLength ?? Int.max)
        guard let store = StoreCode(rawValue: text) else {
            throw LedgerError(.unknownStore, "\(field(rule.field)): unknown store \"\(text)\" (expected AS or GG)")
        }
        return store
    }

    func productType() throws(LedgerError) -> ProductType {
        guard let (name, value) = value(["productType"]) else { throw invalid("productType", "missing") }
        switch value {
        case .string(let text):
            if let type = ProductType(rawValue: text) { return type }
            if let number = Int(text), let type = ProductType(toastNumber: number) { return type }
            throw LedgerError(.unknownProductType,
                              "\(field(name)): unknown product type \"\(text.prefix(40))\" (expected CONSUMABLE, AUTO_RENEWABLE or CONSUMABLE_AUTO_RENEWABLE)")
        case .number(let literal):
            if let number = Int(literal), let type = ProductType(toastNumber: number) { return type }
            throw LedgerError(.unknownProductType, "\(field(name)): unknown product type \(literal.prefix(40)) (expected 1, 2 or 3)")
        default:
            throw invalid(name, "expected a string, got \(value.typeName)")
        }
    }

    func price() throws(LedgerError) -> Price {
        guard let (name, value) = value(["price"]) else { throw invalid("price", "missing") }
        let literal: String
        switch value {
        case .string(let text): literal = text
        case .number(let text): literal = text
        default: throw invalid(name, "expected a decimal string or number, got \(value.typeName)")
        }
        guard let price = Price(literal) else {
            if literal.hasPrefix("-"), Price(String(literal.dropFirst())) != nil {
                throw invalid(name, "must not be negative, got \(literal)")
            }
            throw invalid(name, "expected a decimal such as \"0.99\", got \"\(literal.prefix(40))\"")
        }
        return price
    }

    func currency() throws(LedgerError) -> String {
        let text = try string(FieldRules.payment("currency"))
        guard text.utf8.count == 3, text.utf8.allSatisfy({ $0 >= 65 && $0 <= 90 }) else {
            throw invalid("currency", "expected three upper-case letters such as USD, got \"\(text)\"")
        }
        return text
    }

    /// An instant: ISO-8601 with a zone, or an integer of epoch milliseconds. `zeroIsAbsent`
    /// reads 0 as no value (the SDKs send 0 for "no expiry").
    ///
    /// Digits finer than a microsecond are truncated, never rounded (PostgreSQL would round
    /// `9999-12-31T23:59:59.9999999Z` into the year 10000, which the ledger refuses): the
    /// instant kept is the one written, to the microsecond (to the millisecond before 1865 and
    /// after 2137, where a `Date` is coarser: `Timestamp.date`), and what the ledger prints
    /// (milliseconds, truncated the same way) is always accepted back as the same instant.
    func time(_ name: String, zeroIsAbsent: Bool = false) throws(LedgerError) -> Date? {
        guard let (name, value) = value([name]) else { return nil }
        switch value {
        case .string(let text):
            guard let stamp = Timestamp.parseISO8601(text) else {
                throw invalid(name, "expected an ISO-8601 time with a zone, such as 2026-01-01T00:00:00Z, got \"\(text.prefix(40))\"")
            }
            return stamp.date
        case .number(let literal):
            // The years 0001-9999, as for ISO-8601 text (PostgreSQL's timestamptz ends in 4713 BC).
            guard let millis = Int64(literal), let stamp = Timestamp(checkedEpochMilliseconds: millis) else {
                throw invalid(name, "expected integer epoch milliseconds in the years 0001 to 9999, got \(literal.prefix(40))")
            }
            if millis == 0 && zeroIsAbsent { return nil }
            return stamp.date
        default:
            throw invalid(name, "expected an ISO-8601 string or epoch milliseconds, got \(value.typeName)")
        }
    }
}
