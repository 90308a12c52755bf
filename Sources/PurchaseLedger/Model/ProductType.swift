/// What a product is, as the TOAST and Gamebase SDKs name it.
public enum ProductType: String, Sendable, Hashable, CaseIterable {
    /// Goods handed out once per payment, then consumed.
    case consumable = "CONSUMABLE"
    /// A subscription that renews itself until cancelled.
    case autoRenewable = "AUTO_RENEWABLE"
    /// A subscription whose every payment (first purchase and renewals) is consumable goods.
    case consumableAutoRenewable = "CONSUMABLE_AUTO_RENEWABLE"

    /// The TOAST IAP number for the type (`UNKNOWN` is 0, which the ledger refuses).
    public var toastNumber: Int {
        switch self {
        case .consumable: 1
        case .autoRenewable: 2
        case .consumableAutoRenewable: 3
        }
    }

    /// The type for a TOAST IAP number: 1, 2 or 3.
    public init?(toastNumber: Int) {
        guard let type = Self.allCases.first(where: { $0.toastNumber == toastNumber }) else { return nil }
        self = type
    }

    /// Whether the type forms a subscription lineage with renewals and an expiry.
    public var isSubscription: Bool { self != .consumable }

    /// Whether a payment of this type can be consumed.
    public var isConsumable: Bool { self != .autoRenewable }
}
