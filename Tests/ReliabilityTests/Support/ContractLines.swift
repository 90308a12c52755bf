import Foundation

/// Contract-shaped NDJSON lines (docs/contract.md §2) for the reliability tests, written by hand so
/// that the tests do not depend on the ledger's own encoder.
enum ContractLines {
    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.fragmentsAllowed])
        let array = String(decoding: data, as: UTF8.self)  // ["…"]
        return String(array.dropFirst().dropLast())
    }

    /// The fields of a payment, in the contract's names; `original` set makes it a subscription payment.
    static func paymentFields(seq: String, user: String = "u1", store: String = "AS", product: String = "gem_100",
                              type: String = "CONSUMABLE", transaction: String? = nil, original: String? = nil,
                              token: String? = nil, day: Int = 1, expiryDays: Int = 30) -> [(String, String)] {
        let purchase = String(format: "2026-01-%02dT00:00:00Z", min(max(day, 1), 28))
        var fields: [(String, String)] = [
            ("userId", quoted(user)), ("storeCode", quoted(store)), ("productId", quoted(product)),
            ("productType", quoted(type)), ("price", "\"0.99\""), ("currency", "\"USD\""),
            ("paymentSeq", quoted(seq)), ("purchaseToken", quoted(token ?? "tok-\(seq)")),
            ("transactionId", quoted(transaction ?? "T-\(seq)")), ("purchaseTime", quoted(purchase)),
        ]
        if type != "CONSUMABLE" {
            if let original { fields.append(("originalTransactionId", quoted(original))) }
            let expiry = Date(timeIntervalSince1970: 1_767_225_600 + Double(day - 1 + expiryDays) * 86_400)
            fields.append(("expiryTime", quoted(ISO8601DateFormatter().string(from: expiry))))
        }
        return fields
    }

    static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\(quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    static func purchase(_ seq: String, user: String = "u1", token: String? = nil) -> String {
        object([("type", "\"purchase\"")] + paymentFields(seq: seq, user: user, token: token))
    }

    /// A payment of subscription lineage `lineage`: its first purchase when `index` is 0, else a renewal.
    static func subscriptionPayment(lineage: String, index: Int, user: String,
                                    type: String = "AUTO_RENEWABLE") -> (seq: String, fields: [(String, String)]) {
        let seq = "\(lineage)-\(index)"
        let transaction = index == 0 ? lineage : "\(lineage)-r\(index)"
        return (seq, paymentFields(seq: seq, user: user, product: "premium_month", type: type,
                                   transaction: transaction, original: lineage, day: 1 + index * 3))
    }

    static func renewalOrPurchase(lineage: String, index: Int, user: String, type: String = "AUTO_RENEWABLE") -> String {
        let payment = subscriptionPayment(lineage: lineage, index: index, user: user, type: type)
        return object([("type", index == 0 ? "\"purchase\"" : "\"renewal\"")] + payment.fields)
    }

    static func restore(user: String, store: String = "AS", items: [[(String, String)]]) -> String {
        object([("type", "\"restore\""), ("userId", quoted(user)), ("storeCode", quoted(store)),
                ("time", "\"2026-03-01T00:00:00Z\""),
                ("purchases", "[" + items.map(object).joined(separator: ",") + "]")])
    }

    static func consume(_ seq: String, user: String = "u1", token: String? = nil,
                        time: String = "2026-01-02T00:00:00Z") -> String {
        object([("type", "\"consume\""), ("userId", quoted(user)), ("paymentSeq", quoted(seq)),
                ("purchaseToken", quoted(token ?? "tok-\(seq)")), ("time", quoted(time))])
    }

    static func refund(_ seq: String, time: String = "2026-01-03T00:00:00Z") -> String {
        object([("type", "\"refund\""), ("paymentSeq", quoted(seq)), ("time", quoted(time)), ("reason", "\"customer\"")])
    }

    static func cancel(store: String = "AS", original: String, time: String = "2026-01-05T00:00:00Z") -> String {
        object([("type", "\"cancel\""), ("storeCode", quoted(store)), ("originalTransactionId", quoted(original)),
                ("time", quoted(time))])
    }

    /// Lines as the text of an NDJSON file.
    static func file(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n" }
}
