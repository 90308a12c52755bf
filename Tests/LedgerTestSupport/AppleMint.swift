import Foundation
import PurchaseLedger

/// App Store notifications signed at test time by a chain the test trusts, as Apple sends them.
public struct AppleMint {
    public let chain: TestAppleChain
    public static let bundle = "com.example.game"

    public init(chain: TestAppleChain) {
        self.chain = chain
    }

    public init(_ variant: TestAppleChain.Variant = .good) {
        chain = TestAppleChain(variant)
    }

    /// What the tests accept: the test chain's root, the example bundle, both environments.
    public var stores: StoreConfiguration {
        StoreConfiguration(appleBundleIds: [Self.bundle], appleEnvironments: ["Production", "Sandbox"],
                           appleRoots: chain.roots, googlePackageNames: [Self.bundle])
    }

    public static func ms(_ iso: String) -> Int64 { Int64((Fixture.time(iso).timeIntervalSince1970 * 1000).rounded()) }

    /// A signedTransactionInfo's content (JSON text, signed later).
    public static func transaction(_ id: String, original: String, product: String = "premium_month",
                            purchase: String, expires: String? = nil, type: String = "Auto-Renewable Subscription",
                            account: String? = "acct-1", price: Int = 9990, bundle: String = bundle,
                            environment: String = "Production", extra: String = "") -> String {
        var fields = [
            "\"transactionId\":\"\(id)\"", "\"originalTransactionId\":\"\(original)\"", "\"bundleId\":\"\(bundle)\"",
            "\"productId\":\"\(product)\"", "\"purchaseDate\":\(ms(purchase))", "\"type\":\"\(type)\"",
            "\"environment\":\"\(environment)\"", "\"price\":\(price)", "\"currency\":\"USD\"",
            "\"signedDate\":\(ms(purchase))", "\"inAppOwnershipType\":\"PURCHASED\"",
        ]
        if let expires { fields.append("\"expiresDate\":\(ms(expires))") }
        if let account { fields.append("\"appAccountToken\":\"\(account)\"") }
        if !extra.isEmpty { fields.append(extra) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A signedRenewalInfo's content.
    public static func renewal(original: String, grace: String? = nil, autoRenew: Int = 1, signed: String) -> String {
        var fields = ["\"originalTransactionId\":\"\(original)\"", "\"autoRenewStatus\":\(autoRenew)",
                      "\"productId\":\"premium_month\"", "\"signedDate\":\(ms(signed))"]
        if let grace { fields.append("\"gracePeriodExpiresDate\":\(ms(grace))") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The decoded payload of a notification (nested parts marked for signing with "$jws").
    public static func payload(_ type: String, subtype: String? = nil, uuid: String, signed: String,
                        transaction: String? = nil, renewal: String? = nil, bundle: String = bundle,
                        environment: String = "Production") -> String {
        var data = ["\"bundleId\":\"\(bundle)\"", "\"environment\":\"\(environment)\"", "\"appAppleId\":1234567890"]
        if let transaction { data.append("\"signedTransactionInfo\":{\"$jws\":\(transaction)}") }
        if let renewal { data.append("\"signedRenewalInfo\":{\"$jws\":\(renewal)}") }
        var fields = ["\"notificationType\":\"\(type)\"", "\"notificationUUID\":\"\(uuid)\"", "\"version\":\"2.0\"",
                      "\"signedDate\":\(ms(signed))", "\"data\":{" + data.joined(separator: ",") + "}"]
        if let subtype { fields.append("\"subtype\":\"\(subtype)\"") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// An ingest line for a payload.
    public func line(_ payload: String) -> String {
        "{\"type\":\"appleNotification\",\"signedPayload\":\"\(chain.signNested(payload))\"}"
    }

    /// The command for a payload, decoded and verified as `ledger ingest` does.
    public func command(_ payload: String) throws -> LedgerCommand {
        try LedgerCommand(line: Array(line(payload).utf8), stores: stores)
    }
}
