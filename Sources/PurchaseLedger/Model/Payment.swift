import Foundation

/// One charge by a store: a first purchase or a renewal, as the SDKs report it.
public struct Payment: Sendable, Hashable {
    /// The game's user ID (1 to 128 characters).
    public var userId: String
    public var storeCode: StoreCode
    /// The product (1 to 255 characters).
    public var productId: String
    public var productType: ProductType
    /// The amount charged, exact.
    public var price: Price
    /// ISO 4217 code, three upper-case letters.
    public var currency: String
    /// The payment's name, unique in the whole ledger.
    public var paymentSeq: String
    /// The secret that a consume must show. Only its SHA-256 digest is stored.
    public var purchaseToken: String
    /// The store's transaction: `(storeCode, transactionId)` names one payment.
    public var transactionId: String
    /// The subscription lineage; `nil` on a first purchase means `transactionId`.
    public var originalTransactionId: String?
    public var purchaseTime: Date
    /// When the subscription period bought by this payment ends; `nil` for consumables.
    public var expiryTime: Date?
    /// The game's own data, kept exactly (any Unicode, up to 65,536 bytes of UTF-8).
    public var payload: String?
    public var sandboxPayment: Bool
    public var promotionPayment: Bool
    public var productSeq: Int64?
    /// The job written with this payment when it is recorded: for a Google payment from a line,
    /// when Google's API is configured, the read that acknowledges it (docs/contract.md §6.3;
    /// ``LedgerCommand/askingStores(_:)`` sets it).
    package var storeCheck: StoreJob?

    public init(
        userId: String, storeCode: StoreCode, productId: String, productType: ProductType,
        price: Price, currency: String, paymentSeq: String, purchaseToken: String,
        transactionId: String, originalTransactionId: String? = nil, purchaseTime: Date,
        expiryTime: Date? = nil, payload: String? = nil, sandboxPayment: Bool = false,
        promotionPayment: Bool = false, productSeq: Int64? = nil
    ) {
        self.userId = userId
        self.storeCode = storeCode
        self.productId = productId
        self.productType = productType
        self.price = price
        self.currency = currency
        self.paymentSeq = paymentSeq
        self.purchaseToken = purchaseToken
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseTime = purchaseTime
        self.expiryTime = expiryTime
        self.payload = payload
        self.sandboxPayment = sandboxPayment
        self.promotionPayment = promotionPayment
        self.productSeq = productSeq
    }

    /// The lineage this payment belongs to, for both subscription types.
    public var lineageId: String? {
        productType.isSubscription ? (originalTransactionId ?? transactionId) : nil
    }

    /// Whether this payment is a renewal of a lineage started by another transaction.
    public var isRenewal: Bool {
        productType.isSubscription && lineageId != transactionId
    }
}
