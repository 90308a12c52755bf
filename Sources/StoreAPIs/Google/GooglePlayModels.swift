import Foundation

/// `purchases.subscriptionsv2.get`'s answer (`SubscriptionPurchaseV2`): what the ledger needs of
/// it to record a payment and decide on acknowledging it.
public struct SubscriptionPurchaseV2: Sendable, Equatable, Decodable {
    /// `SUBSCRIPTION_STATE_ACTIVE`, `SUBSCRIPTION_STATE_IN_GRACE_PERIOD`, …, as Google writes it.
    public var subscriptionState: String?
    /// `ACKNOWLEDGEMENT_STATE_PENDING` or `ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED`.
    public var acknowledgementState: String?
    /// The latest order (deprecated by Google in favour of each line item's `latestSuccessfulOrderId`).
    public var latestOrderId: String?
    /// Whether `testPurchase` is present: a license tester's purchase (the ledger's sandbox payment).
    public var isTestPurchase: Bool
    /// `externalAccountIdentifiers.obfuscatedExternalAccountId`: the app's account id for the buyer.
    public var obfuscatedExternalAccountId: String?
    /// `startTime`.
    public var startTime: Date?
    /// `linkedPurchaseToken`: the token this purchase replaces (an upgrade or a resubscription).
    public var linkedPurchaseToken: String?
    /// One per product of the subscription.
    public var lineItems: [LineItem]

    /// `SubscriptionPurchaseLineItem`.
    public struct LineItem: Sendable, Equatable, Decodable {
        /// The subscription product (`vip_month`).
        public var productId: String
        /// When this item's current period ends.
        public var expiryTime: Date?
        /// The order of the item's latest successful charge (`GPA.1234-5678-9012-34567..3`).
        public var latestSuccessfulOrderId: String?
        /// Present for an auto-renewing base plan.
        public var autoRenewingPlan: AutoRenewingPlan?

        public init(productId: String, expiryTime: Date? = nil, latestSuccessfulOrderId: String? = nil,
                    autoRenewingPlan: AutoRenewingPlan? = nil) {
            self.productId = productId
            self.expiryTime = expiryTime
            self.latestSuccessfulOrderId = latestSuccessfulOrderId
            self.autoRenewingPlan = autoRenewingPlan
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: GoogleKey.self)
            productId = try c.decode(String.self, forKey: "productId")
            expiryTime = try c.googleTimestamp("expiryTime")
            latestSuccessfulOrderId = try c.decodeIfPresent(String.self, forKey: "latestSuccessfulOrderId")
            autoRenewingPlan = try c.decodeIfPresent(AutoRenewingPlan.self, forKey: "autoRenewingPlan")
        }
    }

    /// `AutoRenewingPlan`.
    public struct AutoRenewingPlan: Sendable, Equatable, Decodable {
        /// Whether the subscription renews at the end of the period.
        public var autoRenewEnabled: Bool?
        /// The price of the next renewal; absent in some answers (the ledger then keeps the last price).
        public var recurringPrice: GoogleMoney?

        public init(autoRenewEnabled: Bool? = nil, recurringPrice: GoogleMoney? = nil) {
            self.autoRenewEnabled = autoRenewEnabled
            self.recurringPrice = recurringPrice
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: GoogleKey.self)
        subscriptionState = try c.decodeIfPresent(String.self, forKey: "subscriptionState")
        acknowledgementState = try c.decodeIfPresent(String.self, forKey: "acknowledgementState")
        latestOrderId = try c.decodeIfPresent(String.self, forKey: "latestOrderId")
        isTestPurchase = c.contains("testPurchase")
        let identifiers = try? c.nestedContainer(keyedBy: GoogleKey.self, forKey: "externalAccountIdentifiers")
        obfuscatedExternalAccountId = try identifiers?.decodeIfPresent(String.self, forKey: "obfuscatedExternalAccountId")
        startTime = try c.googleTimestamp("startTime")
        linkedPurchaseToken = try c.decodeIfPresent(String.self, forKey: "linkedPurchaseToken")
        lineItems = try c.decodeIfPresent([LineItem].self, forKey: "lineItems") ?? []
    }

    /// Whether Google still waits for this purchase to be acknowledged.
    public var isAcknowledgementPending: Bool { acknowledgementState == "ACKNOWLEDGEMENT_STATE_PENDING" }

    /// The line item of `productId`, if the subscription has one.
    public func lineItem(productId: String) -> LineItem? { lineItems.first { $0.productId == productId } }
}

/// Google's `Money`: a currency and an amount in whole `units` (a decimal integer, written as a
/// string in JSON) plus `nanos` (billionths).
public struct GoogleMoney: Sendable, Equatable, Decodable {
    /// ISO 4217 (`USD`).
    public var currencyCode: String
    /// Whole units, a decimal integer as Google writes it (`"4"`, `"-1"`).
    public var units: String
    /// Billionths of a unit, of the same sign as `units`.
    public var nanos: Int

    public init(currencyCode: String, units: String, nanos: Int) {
        self.currencyCode = currencyCode
        self.units = units
        self.nanos = nanos
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: GoogleKey.self)
        currencyCode = try c.decode(String.self, forKey: "currencyCode")
        units = try c.googleInt64Text("units") ?? "0"
        nanos = try c.decodeIfPresent(Int.self, forKey: "nanos") ?? 0
    }

    /// The exact amount (`4.99`, `5`), or nil when the parts are not Google's (see `Money`).
    public var decimal: String? { Money.decimalString(units: units, nanos: nanos) }
}

/// `purchases.productsv2.getproductpurchasev2`'s answer (`ProductPurchaseV2`).
public struct ProductPurchaseV2: Sendable, Equatable, Decodable {
    /// The order (`GPA.2222-3333-4444-55555`): the payment's transaction id.
    public var orderId: String?
    /// When the purchase was completed.
    public var purchaseCompletionTime: Date?
    /// `ACKNOWLEDGEMENT_STATE_PENDING` or `ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED`.
    public var acknowledgementState: String?
    /// Whether `testPurchaseContext` is present: a license tester's purchase.
    public var isTestPurchase: Bool
    /// The app's account id for the buyer.
    public var obfuscatedExternalAccountId: String?
    /// `purchaseStateContext.purchaseState`: `PURCHASED`, `CANCELLED` or `PENDING`.
    public var purchaseState: String?
    /// `productLineItem[].productId`, in order.
    public var productIds: [String]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: GoogleKey.self)
        orderId = try c.decodeIfPresent(String.self, forKey: "orderId")
        purchaseCompletionTime = try c.googleTimestamp("purchaseCompletionTime")
        acknowledgementState = try c.decodeIfPresent(String.self, forKey: "acknowledgementState")
        isTestPurchase = c.contains("testPurchaseContext")
        obfuscatedExternalAccountId = try c.decodeIfPresent(String.self, forKey: "obfuscatedExternalAccountId")
        let state = try? c.nestedContainer(keyedBy: GoogleKey.self, forKey: "purchaseStateContext")
        purchaseState = try state?.decodeIfPresent(String.self, forKey: "purchaseState")
        var ids: [String] = []
        if var items = try? c.nestedUnkeyedContainer(forKey: "productLineItem") {
            while !items.isAtEnd {
                let item = try items.nestedContainer(keyedBy: GoogleKey.self)
                ids.append(try item.decode(String.self, forKey: "productId"))
            }
        }
        productIds = ids
    }

    /// Whether Google still waits for this purchase to be acknowledged.
    public var isAcknowledgementPending: Bool { acknowledgementState == "ACKNOWLEDGEMENT_STATE_PENDING" }
}

/// One entry of `purchases.voidedpurchases.list` (`VoidedPurchase`).
public struct VoidedPurchase: Sendable, Equatable, Decodable {
    /// The voided purchase's token.
    public var purchaseToken: String
    public var orderId: String?
    /// When the purchase was made, in milliseconds since the epoch.
    public var purchaseTimeMillis: Int64?
    /// When it was voided, in milliseconds since the epoch.
    public var voidedTimeMillis: Int64?
    /// 0 user, 1 developer, 2 Google.
    public var voidedSource: Int?
    /// 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental purchase, 5 fraud, 6 friendly
    /// fraud, 7 chargeback, 8 unacknowledged purchase.
    public var voidedReason: Int?
    /// How many units a quantity-based partial refund voided; nil for a whole purchase.
    public var voidedQuantity: Int?

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: GoogleKey.self)
        purchaseToken = try c.decode(String.self, forKey: "purchaseToken")
        orderId = try c.decodeIfPresent(String.self, forKey: "orderId")
        purchaseTimeMillis = try c.googleInt64Text("purchaseTimeMillis").flatMap { Int64($0) }
        voidedTimeMillis = try c.googleInt64Text("voidedTimeMillis").flatMap { Int64($0) }
        voidedSource = try c.decodeIfPresent(Int.self, forKey: "voidedSource")
        voidedReason = try c.decodeIfPresent(Int.self, forKey: "voidedReason")
        voidedQuantity = try c.decodeIfPresent(Int.self, forKey: "voidedQuantity")
    }
}

/// One page of voided purchases.
public struct VoidedPurchasesPage: Sendable, Equatable, Decodable {
    /// This page's purchases, in Google's order.
    public var voidedPurchases: [VoidedPurchase]
    /// `tokenPagination.nextPageToken`: present when more pages follow.
    public var nextPageToken: String?

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: GoogleKey.self)
        voidedPurchases = try c.decodeIfPresent([VoidedPurchase].self, forKey: "voidedPurchases") ?? []
        let pagination = try? c.nestedContainer(keyedBy: GoogleKey.self, forKey: "tokenPagination")
        nextPageToken = try pagination?.decodeIfPresent(String.self, forKey: "nextPageToken").flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A JSON key by name, for the hand-written decoders above.
struct GoogleKey: CodingKey, ExpressibleByStringLiteral {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(stringLiteral value: String) { self.stringValue = value }
}

extension KeyedDecodingContainer where Key == GoogleKey {
    /// An RFC 3339 timestamp (Google's `Timestamp`), nil when absent.
    func googleTimestamp(_ key: GoogleKey) throws -> Date? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = StoreTimestamp.date(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "not an RFC 3339 timestamp")
        }
        return date
    }

    /// An int64, which Google's JSON writes as a string (a number is accepted too), as its digits.
    func googleInt64Text(_ key: GoogleKey) throws -> String? {
        if let text = try? decodeIfPresent(String.self, forKey: key) { return text }
        return try decodeIfPresent(Int64.self, forKey: key).map(String.init)
    }
}
