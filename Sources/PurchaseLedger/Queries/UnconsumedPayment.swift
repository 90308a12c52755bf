import Foundation

/// A consumable payment that is neither consumed nor refunded: goods paid for, not yet handed out.
public struct UnconsumedPayment: Sendable, Hashable {
    public var userId: String
    public var storeCode: StoreCode
    public var productId: String
    public var productType: ProductType
    public var price: Price
    public var currency: String
    public var paymentSeq: String
    public var transactionId: String
    /// The lineage for subscription payments; as given (often nil) for consumables.
    public var originalTransactionId: String?
    public var purchaseTime: Date
    public var expiryTime: Date?
    public var payload: String?
    public var sandboxPayment: Bool
    public var promotionPayment: Bool
}
