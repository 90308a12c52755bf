/// A set of projections that `ledger.install_projections` (Schema/definitions/projections) creates together and
/// that `ProjectionRebuilder` replays and swaps together. There is one today, `ledger`: the
/// tables the queries and the command functions read.
public enum ProjectionSet: String, CaseIterable, Sendable {
    /// `ledger.payments`, `ledger.lineages`, `ledger.auto_renew_changes`, `ledger.restores`.
    case ledger

    /// The sets a `--projection NAME` argument names: one set by name, or every set for `all`.
    /// Throws `RebuildError.unknownProjection` for any other name.
    public static func named(_ name: String) throws -> [ProjectionSet] {
        if name == "all" { return allCases }
        guard let set = ProjectionSet(rawValue: name) else { throw RebuildError.unknownProjection(name) }
        return [set]
    }

    /// The schema that holds the live tables.
    public var liveSchema: String { rawValue }

    /// The tables of the set, with their keys.
    ///
    /// Keep this list in step with `ledger.install_projections` (Schema/definitions/projections/install_projections.sql).
    public var tables: [ProjectionTable] {
        switch self {
        case .ledger:
            [
                // Consumes, refunds, extensions and the spans' step find their payment by its key:
                // without it every range scanned and sorted all of payments (quadratic in the log).
                ProjectionTable(name: "payments", key: ["payment_seq"], keyUsedByReplay: true),
                // project_range inserts lineages with ON CONFLICT DO NOTHING: a replay needs the key.
                ProjectionTable(name: "lineages", key: ["store_code", "original_transaction_id"], keyUsedByReplay: true),
                ProjectionTable(name: "auto_renew_changes", key: ["store_code", "original_transaction_id", "position"]),
                ProjectionTable(name: "restores", key: ["position"]),
                // The stores' notifications.
                ProjectionTable(name: "billing_states", key: ["store_code", "original_transaction_id", "position"]),
                ProjectionTable(name: "notifications", key: ["store_code", "notification_id"]),
                ProjectionTable(name: "products", key: ["store_code", "product_id"], keyUsedByReplay: true),
                ProjectionTable(name: "account_links", key: ["store_code", "app_account_token"], keyUsedByReplay: true),
                ProjectionTable(name: "payment_aliases", key: ["alias_seq"]),
                // Each lineage's entitled spans, for analytics.access.
                ProjectionTable(name: "entitled_spans", key: ["store_code", "lineage_id", "with_sandbox", "n"]),
                // Each lineage's state from each change point on, for subscriptions_at.
                ProjectionTable(name: "lineage_states", key: ["store_code", "lineage_id", "valid_from"]),
                // The key registries: who owns each key unique across users.
                ProjectionTable(name: "payment_keys", key: ["payment_seq"]),
                ProjectionTable(name: "transaction_keys", key: ["store_code", "transaction_id"]),
                ProjectionTable(name: "lineage_keys", key: ["store_code", "lineage_id"]),
                // A renewal's token is claimed already: ON CONFLICT DO NOTHING needs the key.
                ProjectionTable(name: "token_keys", key: ["token_sha256"], keyUsedByReplay: true),
                // A release moves its notification's key to the user, found by the key.
                ProjectionTable(name: "notification_keys", key: ["store_code", "notification_id"], keyUsedByReplay: true),
            ]
        }
    }
}

/// One projection table: its name (the same in the live schema and in a shadow schema) and
/// the columns by which a verify matches live and replayed rows: its key unique across users,
/// which the primary key of a user-owned table extends with the owner (so that a row handed to
/// another user shows as a changed `user_id`, not as one row missing and one extra).
public struct ProjectionTable: Sendable, Hashable {
    /// The table name, such as `payments`.
    public let name: String
    /// The key's columns, in order.
    public let key: [String]
    /// Whether project_range relies on the table's primary key (ON CONFLICT, or a lookup by the
    /// key): a replay then keeps it while it loads; otherwise it builds it after the load. A
    /// replay builds every unique key after the load either way.
    public let keyUsedByReplay: Bool

    public init(name: String, key: [String], keyUsedByReplay: Bool = false) {
        self.name = name
        self.key = key
        self.keyUsedByReplay = keyUsedByReplay
    }
}

extension Sequence<ProjectionSet> {
    /// The tables whose keys project_range needs while it loads (``ProjectionTable/keyUsedByReplay``):
    /// a replay, for a rebuild or a verify, keeps them.
    var keysUsedByReplay: Set<String> {
        Set(flatMap { $0.tables.filter(\.keyUsedByReplay).map(\.name) })
    }
}
