import LedgerJSON
import Postgres

/// One of the contract's field rules (docs/contract.md §2.1), as `Schema/definitions/rules/field_rules.json`
/// states it. The library's decoder takes its names and limits from here, and the database's
/// `ledger.apply_payments` (`ledger.field_invalid`) from the same file, loaded into `ledger.field_rules`.
public struct FieldRule: Sendable, Equatable {
    /// What the value must be.
    public enum Kind: String, Sendable, Hashable {
        /// A string of 1 to ``FieldRule/maxLength`` characters (Unicode scalars), without U+0000.
        case text
        /// One of ``FieldRule/values``.
        case enumeration = "enum"
        /// Digits with an optional fraction, at least 0, as a JSON string or number.
        case decimal
        /// Three upper-case letters.
        case currency
        /// A secret of 1 to ``FieldRule/maxLength`` characters, kept only as its SHA-256 under
        /// ``FieldRule/storedAs``.
        case token
        case bool
        /// ISO-8601 with a zone or epoch milliseconds, in the years 0001 to 9999.
        case time
        /// Any string (U+0000 included) of at most ``FieldRule/maxBytes`` bytes of UTF-8.
        case payload
        /// A 64-bit integer.
        case integer
    }

    /// The contract's name, which a refusal names.
    public let field: String
    /// The other names the TOAST and Gamebase SDKs use.
    public let aliases: [String]
    public let kind: Kind
    /// At most this many characters (Unicode scalars).
    public let maxLength: Int?
    /// At most this many bytes of UTF-8.
    public let maxBytes: Int?
    /// Must be given. A field with a ``defaultValue`` may be left out of a line.
    public let required: Bool
    /// What a line that leaves the field out means.
    public let defaultValue: JSONValue?
    /// The allowed values of an enumeration.
    public let values: [String]
    /// The key under which the database receives a token's SHA-256 digest (hex).
    public let storedAs: String?

    /// The field's name followed by its aliases: the names a reader tries, in order.
    public var names: [String] { [field] + aliases }
}

/// The contract's field rules, read from the copy of `Schema/definitions/rules/field_rules.json`
/// built into the binary: ``payment`` (a purchase, a renewal, a restored item; in the order the
/// database reports them) and ``command`` (the other commands' fields).
public enum FieldRules {
    /// The file's path under `Schema/definitions/`.
    public static let definitionPath = "rules/field_rules.json"

    /// The fields of a payment, in the database's order.
    public static let payment: [FieldRule] = rules("payment")
    /// The other commands' fields.
    public static let command: [FieldRule] = rules("command")

    /// The payment rule of `field` (a name the rules file holds; anything else is a programming error).
    static func payment(_ field: String) -> FieldRule { rule(field, in: payment) }
    /// The command rule of `field`.
    static func command(_ field: String) -> FieldRule { rule(field, in: command) }

    private static func rule(_ field: String, in rules: [FieldRule]) -> FieldRule {
        guard let rule = rules.first(where: { $0.field == field }) else {
            preconditionFailure("\(definitionPath) has no rule for \(field)")
        }
        return rule
    }

    /// The list `scope` of the embedded file. The file is part of the build: a malformed one is
    /// a build defect, caught by the first test that decodes a command.
    private static func rules(_ scope: String) -> [FieldRule] {
        guard let file = EmbeddedSchema.files.first(where: { $0.path == "definitions/" + definitionPath }),
              case .object(let root)? = try? JSONParser.parse(Array(file.text.utf8)),
              case .array(let items)? = root[scope] else {
            preconditionFailure("\(definitionPath) is missing or has no \"\(scope)\" list")
        }
        return items.map { item in
            guard case .object(let rule) = item, let field = rule["field"]?.stringValue,
                  let kind = rule["kind"]?.stringValue.flatMap(FieldRule.Kind.init(rawValue:)) else {
                preconditionFailure("\(definitionPath): a \"\(scope)\" rule without a field or a known kind")
            }
            return FieldRule(
                field: field,
                aliases: rule["aliases"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                kind: kind,
                maxLength: rule["maxLength"]?.int64Value.map { Int($0) },
                maxBytes: rule["maxBytes"]?.int64Value.map { Int($0) },
                required: rule["required"]?.boolValue ?? false,
                defaultValue: rule["default"],
                values: rule["values"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                storedAs: rule["storedAs"]?.stringValue)
        }
    }

    /// Replaces the rows of `ledger.field_rules` with the rules of `json` (the file's text), in
    /// the caller's transaction: the migrator's step for this definition.
    static func load(json: String, into tx: Connection) throws {
        try tx.execute("DELETE FROM ledger.field_rules")
        try tx.execute("""
            INSERT INTO ledger.field_rules (position, scope, field, key, aliases, kind, max_length, max_bytes,
                                            required, default_value, allowed)
            SELECT s.base + r.n, s.scope, r.rule->>'field', coalesce(r.rule->>'storedAs', r.rule->>'field'),
                   ARRAY(SELECT jsonb_array_elements_text(coalesce(r.rule->'aliases', '[]'))), r.rule->>'kind',
                   (r.rule->>'maxLength')::integer, (r.rule->>'maxBytes')::integer,
                   coalesce((r.rule->>'required')::boolean, false), r.rule->'default',
                   ARRAY(SELECT jsonb_array_elements_text(coalesce(r.rule->'values', '[]')))
              FROM (VALUES ('payment', 0), ('command', 1000)) AS s (scope, base),
                   jsonb_array_elements(\(JSONB(text: json))::jsonb -> s.scope) WITH ORDINALITY AS r (rule, n)
            """)
    }
}
