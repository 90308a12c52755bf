import Foundation

/// The valid lines that `HostileLines` starts from, and the values it splices into them.
extension HostileLines {
    typealias Fields = [(key: String, value: String)]

    /// A JSON string literal of ASCII text without quotes or backslashes.
    static func q(_ text: String) -> String { "\"" + text + "\"" }

    static func render(_ fields: Fields) -> String {
        "{" + fields.map { q($0.key) + ":" + $0.value }.joined(separator: ",") + "}"
    }

    static func payment(seq: String, tx: String, user: String, type: String = "CONSUMABLE",
                        original: String? = nil, token: String? = nil) -> Fields {
        var fields: Fields = [
            ("userId", q(user)), ("storeCode", q("AS")), ("productId", q("gem_100")), ("productType", q(type)),
            ("price", q("0.99")), ("currency", q("USD")), ("paymentSeq", q(seq)),
            ("purchaseToken", q(token ?? "tok-" + seq)), ("transactionId", q(tx)),
            ("purchaseTime", q("2026-01-01T00:00:00Z")), ("payload", q("character-7 \\u00e9\\u2028")),
            ("sandboxPayment", "false"), ("promotionPayment", "false"), ("productSeq", "7"),
        ]
        if type == "CONSUMABLE" {
            fields.append(("expiryTime", "null"))
        } else {
            fields.append(("expiryTime", q("2026-02-01T00:00:00Z")))
            if let original { fields.append(("originalTransactionId", q(original))) }
        }
        return fields
    }

    typealias Template = (fields: Fields, required: Set<String>, itemRequired: Set<String>)

    static let paymentRequired: Set<String> = ["userId", "storeCode", "productId", "productType", "price", "currency",
                                               "paymentSeq", "purchaseToken", "transactionId", "purchaseTime"]
    static let kinds = 7

    /// One template of each command, with the fields the contract requires.
    static func templates(_ n: String) -> [Template] { (0..<kinds).map { template($0, n) } }

    /// A valid line of command kind `kind` (purchase, subscription, renewal, consume, refund,
    /// cancel, restore) about the `mut-` and `sys-` names numbered `n`.
    static func template(_ kind: Int, _ n: String) -> Template {
        switch kind {
        case 0:
            return ([("type", q("purchase"))] + payment(seq: "sys-\(n)", tx: "mtx-\(n)", user: "mut-user"),
                    paymentRequired.union(["type"]), [])
        case 1:
            return ([("type", q("purchase"))] + payment(seq: "sys-s\(n)", tx: "mtx-s\(n)", user: "mut-user", type: "AUTO_RENEWABLE"),
                    paymentRequired.union(["type", "expiryTime"]), [])
        case 2:
            return ([("type", q("renewal"))] + payment(seq: "sys-r\(n)", tx: "mtx-r\(n)", user: "mut-user",
                                                         type: "CONSUMABLE_AUTO_RENEWABLE", original: "mtx-s\(n)"),
                    paymentRequired.union(["type", "expiryTime", "originalTransactionId"]), [])
        case 3:
            return ([("type", q("consume")), ("userId", q("mut-user")), ("paymentSeq", q("sys-\(n)")),
                     ("purchaseToken", q("tok-sys-\(n)")), ("time", q("2026-01-02T00:00:00Z"))],
                    // purchaseToken is optional since docs/contract.md §5.2 (payments learned from the store have none).
                    ["type", "userId", "paymentSeq"], [])
        case 4:
            return ([("type", q("refund")), ("paymentSeq", q("sys-\(n)")), ("time", q("2026-01-03T00:00:00Z")),
                     ("reason", q("customer"))], ["type", "paymentSeq"], [])
        case 5:
            return ([("type", q("cancel")), ("storeCode", q("AS")), ("originalTransactionId", q("mtx-s\(n)")),
                     ("time", 1_767_312_000_000.description)], ["type", "storeCode", "originalTransactionId"], [])
        default:
            let item = payment(seq: "sys-i\(n)", tx: "mtx-i\(n)", user: "mut-user", type: "AUTO_RENEWABLE")
            return ([("type", q("restore")), ("userId", q("mut-user")), ("storeCode", q("AS")),
                     ("time", q("2026-03-01T00:00:00Z")), ("purchases", "[" + render(item) + "]")],
                    ["type", "userId", "storeCode", "purchases"],
                    paymentRequired.subtracting(["userId", "storeCode"]).union(["expiryTime"]))
        }
    }

    static let wrongValues = [
        "1", "-1", "0", "1.5", "-0", "1e400", "-1e400", "123456789012345678901234567890", "0.0000000000000000000001",
        "true", "false", "null", "[]", "{}", "\"\"", "\" \"", "\"\\u0000\"", "\"\\ud800\"", "\"x\"",
        "\"" + String(repeating: "x", count: 5000) + "\"", "9223372036854775808", "-9223372036854775809",
        "\"9999-12-31T23:59:59Z\"", "\"0001-01-01T00:00:00Z\"", "-62135596800001", "253402300800000",
        String(repeating: "[", count: 70) + String(repeating: "]", count: 70),
        String(repeating: "{\"a\":", count: 63) + "1" + String(repeating: "}", count: 63),
    ]

    static let interesting = ["null", "1e999", "\"", "\\", "{", "}", "[", "]", ",", ":", "\\u0000", "\\ud800",
                              "-", "0", "\"\":", "true", "\u{0}", "\u{7F}", "\u{FEFF}"]
}
