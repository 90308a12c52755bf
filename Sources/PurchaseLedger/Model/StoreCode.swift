/// The store that charged a payment.
public enum StoreCode: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Apple's App Store.
    case appStore = "AS"
    /// Google Play.
    case googlePlay = "GG"

    public static func < (lhs: StoreCode, rhs: StoreCode) -> Bool { lhs.rawValue < rhs.rawValue }
}
