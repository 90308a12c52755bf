import Foundation
import PurchaseLedger

/// Contract-shaped NDJSON lines and Swift values for tests.
public enum Fixture {
    public static func time(_ text: String) -> Date { Timestamp.parseISO8601(text)!.date }

    public static func consumable(_ seq: String, user: String = "u1", store: StoreCode = .appStore,
                           product: String = "gem_100", price: Price = "0.99",
                           at: String = "2026-01-01T00:00:00Z", payload: String? = nil) -> Payment {
        Payment(userId: user, storeCode: store, productId: product, productType: .consumable, price: price,
                currency: "USD", paymentSeq: seq, purchaseToken: "tok-\(seq)", transactionId: "T-\(seq)",
                purchaseTime: time(at), payload: payload)
    }

    public static func subscription(_ seq: String, user: String = "u1", store: StoreCode = .appStore,
                             product: String = "premium_month", type: ProductType = .autoRenewable,
                             transaction: String? = nil, original: String? = nil,
                             from: String, to: String) -> Payment {
        Payment(userId: user, storeCode: store, productId: product, productType: type, price: "9.99",
                currency: "USD", paymentSeq: seq, purchaseToken: "tok-\(seq)",
                transactionId: transaction ?? "T-\(seq)", originalTransactionId: original,
                purchaseTime: time(from), expiryTime: time(to))
    }

    /// A purchase line in the contract's canonical names, with fields replaced or removed.
    public static func purchaseLine(_ changes: [String: String?] = [:]) -> String {
        let fields: [(String, String)] = [
            ("type", "\"purchase\""), ("userId", "\"u1\""), ("storeCode", "\"AS\""),
            ("productId", "\"gem_100\""), ("productType", "\"CONSUMABLE\""), ("price", "\"0.99\""),
            ("currency", "\"USD\""), ("paymentSeq", "\"P-1\""), ("purchaseToken", "\"tok-1\""),
            ("transactionId", "\"T-1\""), ("purchaseTime", "\"2026-01-01T00:00:00Z\""),
        ]
        return object(fields, with: changes)
    }

    /// A JSON object of `fields` (key, JSON text) in order, with fields replaced, removed (nil)
    /// or added at the end.
    public static func object(_ fields: [(String, String)], with changes: [String: String?]) -> String {
        var fields = fields
        for (key, value) in changes {
            if let index = fields.firstIndex(where: { $0.0 == key }) {
                if let value { fields[index].1 = value } else { fields.remove(at: index) }
            } else if let value {
                fields.append((key, value))
            }
        }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}
