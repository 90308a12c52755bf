import LedgerJSON
import Testing

@Suite("JSONValue and JSONObject")
struct JSONValueTests {
    @Test(
        "typeName names each JSON type for messages",
        arguments: [
            (JSONValue.null, "null"), (.bool(true), "boolean"), (.number("1"), "number"),
            (.string("a"), "string"), (.array([]), "array"), (.object([:]), "object"),
        ]
    )
    func typeNames(value: JSONValue, name: String) {
        #expect(value.typeName == name)
    }

    @Test("each accessor answers only for its own case")
    func accessors() {
        let values: [JSONValue] = [.null, .bool(false), .number("1.5"), .string("s"), .array([.null]), .object(["k": .null])]
        #expect(values.compactMap(\.stringValue) == ["s"])
        #expect(values.compactMap(\.boolValue) == [false])
        #expect(values.compactMap(\.numberValue) == ["1.5"])
        #expect(values.compactMap(\.arrayValue) == [[.null]])
        #expect(values.compactMap(\.objectValue) == [["k": .null]])
        #expect(values.filter(\.isNull).count == 1)
    }

    @Test(
        "int64Value reads plain integers that fit, and nothing else",
        arguments: [
            ("0", Int64(0)), ("-0", 0), ("1767225600000", 1_767_225_600_000),
            ("9223372036854775807", .max), ("-9223372036854775808", .min),
        ]
    )
    func int64Values(literal: String, expected: Int64) {
        #expect(JSONValue.number(literal).int64Value == expected)
    }

    @Test("int64Value is nil for fractions, exponents, overflow and non-numbers",
          arguments: ["1.0", "1e3", "9223372036854775808", "-9223372036854775809"])
    func int64ValueRefusals(literal: String) {
        #expect(JSONValue.number(literal).int64Value == nil)
        #expect(JSONValue.string("12").int64Value == nil)
    }

    @Test("numbers compare by their literal text, so 1.10 and 1.1 differ")
    func numbersCompareByLiteral() {
        #expect(JSONValue.number("1.10") != .number("1.1"))
        #expect(JSONValue.number("0.99") == .number("0.99"))
    }

    @Test("object equality depends on field order and repeated fields")
    func objectEquality() {
        let ab: JSONObject = ["a": .number("1"), "b": .null]
        #expect(ab == JSONObject([(key: "a", value: .number("1")), (key: "b", value: .null)]))
        #expect(ab != ["b": .null, "a": .number("1")])
        #expect(ab != ["a": .number("1"), "b": .null, "b": .null])
        #expect(ab != ["a": .number("2"), "b": .null])
        #expect(ab != ["a": .number("1"), "c": .null])
    }

    @Test("the subscript reads the last repeated key; setting replaces it or appends")
    func subscriptSemantics() {
        var object: JSONObject = ["a": .number("1"), "b": .null, "a": .number("2")]
        #expect(object["a"] == .number("2"))
        #expect(object.keys == ["a", "b"])
        object["a"] = .number("3")
        #expect(object.fields.map(\.value) == [.number("1"), .null, .number("3")])
        object["c"] = .bool(true)
        #expect(object.keys == ["a", "b", "c"])
        object["a"] = nil
        #expect(object.keys == ["b", "c"])
        #expect(object["a"] == nil)
        #expect(object.count == 2)
        #expect(!object.isEmpty)
        #expect(JSONObject().isEmpty)
    }
}
