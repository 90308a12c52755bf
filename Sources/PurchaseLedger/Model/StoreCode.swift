import Postgres

/// The store that charged a payment.
public enum StoreCode: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Apple's App Store.
    case appStore = "AS"
    /// Google Play.
    case googlePlay = "GG"

    public static func < (lhs: StoreCode, rhs: StoreCode) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension Set<StoreCode> {
    /// The stores a query keeps, for `store_code = ANY($1::text[])`: these, or every store when
    /// the set is empty; their codes in order.
    var storeList: PostgresArray {
        PostgresArray(elements: (isEmpty ? StoreCode.allCases : sorted()).map { .text($0.rawValue) })
    }
}
