import Postgres

/// How many rows of a projection table there are, and how many of them are strangers: not owned
/// by the owner of the event that wrote them (or, for a lineage's rows, by the lineage's user).
/// A stranger would live on another shard than its event once the log and the projections are
/// distributed by owner.
public struct ProjectionOwnership: Equatable, Sendable, CustomStringConvertible {
    public let rows: Int
    public let strangers: Int

    public var description: String { "\(rows) rows, \(strangers) strangers" }
}

extension Connection {
    /// Every user-owned projection table of the live schema, by name. A notification belongs to
    /// the owner of its release when it has one (the release moved it), else of its receipt.
    public func projectionOwnership() throws -> [String: ProjectionOwnership] {
        let rows = try query("""
            SELECT 'payments' AS name, count(*) AS rows,
                   count(*) FILTER (WHERE x.user_id IS DISTINCT FROM e.user_id) AS strangers
              FROM ledger.payments x LEFT JOIN ledger.events e ON e.position = x.recorded_position
            UNION ALL
            SELECT 'lineages', count(*), count(*) FILTER (WHERE x.user_id IS DISTINCT FROM e.user_id)
              FROM ledger.lineages x LEFT JOIN ledger.events e ON e.position = x.first_position
            UNION ALL
            SELECT 'auto_renew_changes', count(*),
                   count(*) FILTER (WHERE x.user_id IS DISTINCT FROM e.user_id OR x.user_id IS DISTINCT FROM l.user_id)
              FROM ledger.auto_renew_changes x LEFT JOIN ledger.events e ON e.position = x.position
              LEFT JOIN ledger.lineages l USING (store_code, original_transaction_id)
            UNION ALL
            SELECT 'billing_states', count(*),
                   count(*) FILTER (WHERE x.user_id IS DISTINCT FROM e.user_id OR x.user_id IS DISTINCT FROM l.user_id)
              FROM ledger.billing_states x LEFT JOIN ledger.events e ON e.position = x.position
              LEFT JOIN ledger.lineages l USING (store_code, original_transaction_id)
            UNION ALL
            SELECT 'restores', count(*), count(*) FILTER (WHERE x.user_id IS DISTINCT FROM e.user_id)
              FROM ledger.restores x LEFT JOIN ledger.events e ON e.position = x.position
            UNION ALL
            SELECT 'notifications', count(*), count(*) FILTER (WHERE x.user_id IS DISTINCT FROM e.user_id)
              FROM ledger.notifications x
              LEFT JOIN ledger.events e ON e.position = coalesce(x.released_position, x.position)
            UNION ALL
            SELECT 'account_links', count(*), count(*) FILTER (WHERE x.user_id IS DISTINCT FROM e.user_id)
              FROM ledger.account_links x LEFT JOIN ledger.events e ON e.position = x.position
            UNION ALL
            SELECT 'payment_aliases', count(*),
                   count(*) FILTER (WHERE x.user_id IS DISTINCT FROM e.user_id OR x.user_id IS DISTINCT FROM p.user_id)
              FROM ledger.payment_aliases x LEFT JOIN ledger.events e ON e.position = x.position
              LEFT JOIN ledger.payments p USING (payment_seq)
            """)
        return Dictionary(uniqueKeysWithValues: try rows.map {
            (try $0.decode("name", as: String.self),
             ProjectionOwnership(rows: try $0.decode("rows", as: Int.self), strangers: try $0.decode("strangers", as: Int.self)))
        })
    }
}
