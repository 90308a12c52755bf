/// The store that charged a payment.
public enum StoreCode: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Apple's App Store.
    case appStore = "AS"
    /// Google Play.
    case googlePlay = "GG"

    public static func < (lhs: StoreCode, rhs: StoreCode) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension Set<StoreCode> {
    /// The stores a query keeps, for `store_code = ANY(string_to_array(list, ','))`: these, or
    /// every store when the set is empty; comma-separated codes in order.
    var storeList: String {
        (isEmpty ? StoreCode.allCases : sorted()).map(\.rawValue).joined(separator: ",")
    }
}
