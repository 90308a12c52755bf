/// One way a live projection row differs from the same row replayed from the log: which table,
/// which row (its key, and the user it belongs to), which column, and both values.
public struct ProjectionDifference: Sendable, Hashable {
    /// How the row differs.
    public enum Kind: String, Sendable, Hashable {
        /// The row is in both, with another value in `column`.
        case changed
        /// The replay has the row, the live table does not.
        case missing
        /// The live table has a row that the replay does not.
        case extra
    }

    /// The table, such as `payments`.
    public var table: String
    /// The row's primary key: (column, value) in key order.
    public var key: [(column: String, value: String)]
    /// The user the row belongs to, when the table has one.
    public var userId: String?
    public var kind: Kind
    /// The differing column (nil for a missing or extra row).
    public var column: String?
    /// The live value as JSON text of the column (nil when absent or SQL NULL).
    public var live: String?
    /// The replayed value.
    public var replayed: String?

    public init(table: String, key: [(column: String, value: String)], userId: String?, kind: Kind,
                column: String?, live: String?, replayed: String?) {
        self.table = table
        self.key = key
        self.userId = userId
        self.kind = kind
        self.column = column
        self.live = live
        self.replayed = replayed
    }

    /// The row for a person: `user u1, payment P-1`, `user u1, lineage AS T-1`, `lineage AS T-1, position 42`.
    /// A row of no user (a parked notification's, owned by `''`) names none.
    public var rowDescription: String {
        var parts: [String] = []
        if let userId, !userId.isEmpty { parts.append("user \(userId)") }
        let values = Dictionary(key.map { ($0.column, $0.value) }, uniquingKeysWith: { a, _ in a })
        if let seq = values["payment_seq"] { parts.append("payment \(seq)") }
        if let store = values["store_code"], let original = values["original_transaction_id"] {
            parts.append("lineage \(store) \(original)")
        }
        if let position = values["position"] { parts.append("position \(position)") }
        return parts.joined(separator: ", ")
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.table == b.table && a.key.map(\.column) == b.key.map(\.column) && a.key.map(\.value) == b.key.map(\.value)
            && a.userId == b.userId && a.kind == b.kind && a.column == b.column && a.live == b.live && a.replayed == b.replayed
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(table)
        for part in key { hasher.combine(part.column); hasher.combine(part.value) }
        hasher.combine(column)
    }
}
