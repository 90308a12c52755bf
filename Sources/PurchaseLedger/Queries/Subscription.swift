import Foundation

/// A subscription lineage as it stood at one instant (docs/contract.md §3.2).
public struct Subscription: Sendable, Hashable {
    /// Where the lineage stood.
    public enum Status: String, Sendable, Hashable {
        /// Its expiry is later than the instant.
        case active
        /// Not paid past its expiry, with access kept until the grace period ends.
        case inGracePeriod
        /// The store is still trying to charge; no access.
        case billingRetry
        /// Google Play account hold; no access.
        case onHold
        /// Google Play pause; no access.
        case paused
        /// Not active because a refund took away a period that would still run.
        case revoked
        /// Its last period ended.
        case expired
    }

    public var userId: String
    public var storeCode: StoreCode
    public var productId: String
    public var productType: ProductType
    public var originalTransactionId: String
    /// The payment that gives the expiry; when none, the latest payment by purchase time.
    public var latestPaymentSeq: String
    /// The lineage's first payment's purchase time.
    public var purchaseTime: Date
    /// The greatest expiry of the payments not refunded by then; nil when every one was.
    public var expiryTime: Date?
    public var autoRenewing: Bool
    public var status: Status
    /// Whether the user has access: `active` or `inGracePeriod`.
    public var entitled: Bool
    /// When the grace period ends, while `inGracePeriod`.
    public var gracePeriodExpiryTime: Date?
}
