/// A JSON object that keeps its fields in input order.
///
/// Repeated keys are kept in ``fields``; lookups by key see the last one,
/// as most JSON parsers do. Lookup is a linear scan from the end, which is
/// the fastest choice for the small objects a ledger command carries.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// The fields in input order, repeated keys included.
    public var fields: [(key: String, value: JSONValue)]

    /// An object with the given fields, in the given order.
    public init(_ fields: [(key: String, value: JSONValue)] = []) {
        self.fields = fields
    }

    /// An object with the literal's fields, in the literal's order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.fields = elements.map { (key: $0.0, value: $0.1) }
    }

    /// The value of the last field named `key`, or `nil` when there is none.
    ///
    /// Setting a value replaces the last field named `key` in place, or appends
    /// a new field; setting `nil` removes every field named `key`.
    public subscript(key: String) -> JSONValue? {
        get {
            var index = fields.endIndex
            while index > fields.startIndex {
                index -= 1
                if fields[index].key == key { return fields[index].value }
            }
            return nil
        }
        set {
            guard let newValue else {
                fields.removeAll { $0.key == key }
                return
            }
            if let index = fields.lastIndex(where: { $0.key == key }) {
                fields[index].value = newValue
            } else {
                fields.append((key: key, value: newValue))
            }
        }
    }

    /// The distinct keys, in order of first appearance.
    public var keys: [String] {
        var seen = Set<String>()
        var result: [String] = []
        result.reserveCapacity(fields.count)
        for field in fields where seen.insert(field.key).inserted {
            result.append(field.key)
        }
        return result
    }

    /// The number of fields, repeated keys included.
    public var count: Int { fields.count }

    /// Whether the object has no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// Two objects are equal when they have the same fields in the same order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.fields.count == rhs.fields.count else { return false }
        for (left, right) in zip(lhs.fields, rhs.fields) {
            guard left.key == right.key, left.value == right.value else { return false }
        }
        return true
    }
}
