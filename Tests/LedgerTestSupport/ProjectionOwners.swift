import Postgres

/// How many rows of a projection table there are, and how many of them are strangers: not owned
/// by the owner of the event that wrote them, or not by the user of the lineage or the payment
/// they belong to.
/// A stranger would live on another shard than its event once the log and the projections are
/// distributed by owner.
public struct ProjectionOwnership: Equatable, Sendable, CustomStringConvertible {
    public let rows: Int
    public let strangers: Int

    public init(rows: Int, strangers: Int) {
        self.rows = rows
        self.strangers = strangers
    }

    public var description: String { "\(rows) rows, \(strangers) strangers" }
}

extension Connection {
    /// Every user-owned projection table of the live schema, by name. A notification belongs to
    /// the owner of its release when it has one (the release moved it), else of its receipt.
    public func projectionOwnership() throws -> [String: ProjectionOwnership] {
        // Each table, the position of the event that wrote a row (x), if any, and the row it must
        // also share its owner with (o), if any.
        let lineage = "ledger.lineages o USING (store_code, original_transaction_id)"
        let spansLineage = "ledger.lineages o ON o.store_code = x.store_code AND o.original_transaction_id = x.lineage_id"
        let tables: [(name: String, event: String?, also: String?)] = [
            ("payments", "x.recorded_position", nil),
            ("lineages", "x.first_position", nil),
            ("auto_renew_changes", "x.position", lineage),
            ("billing_states", "x.position", lineage),
            ("restores", "x.position", nil),
            ("notifications", "coalesce(x.released_position, x.position)", nil),
            ("account_links", "x.position", nil),
            ("payment_aliases", "x.position", "ledger.payments o USING (payment_seq)"),
            ("entitled_spans", nil, spansLineage),
            ("lineage_states", nil, spansLineage),
        ]
        let sql = tables.map { t in
            let differs = [t.event.map { _ in "x.user_id IS DISTINCT FROM e.user_id" },
                           t.also.map { _ in "x.user_id IS DISTINCT FROM o.user_id" }].compactMap { $0 }
            let joins = [t.event.map { "LEFT JOIN ledger.events e ON e.position = \($0)" },
                         t.also.map { "LEFT JOIN \($0)" }].compactMap { $0 }
            return """
                SELECT '\(t.name)' AS name, count(*) AS rows,
                       count(*) FILTER (WHERE \(differs.joined(separator: " OR "))) AS strangers
                  FROM ledger.\(t.name) x \(joins.joined(separator: " "))
                """
        }.joined(separator: "\nUNION ALL\n")
        let rows = try query(SQL(unsafeSQL: sql))
        return Dictionary(uniqueKeysWithValues: try rows.map {
            (try $0.decode("name", as: String.self),
             ProjectionOwnership(rows: try $0.decode("rows", as: Int.self), strangers: try $0.decode("strangers", as: Int.self)))
        })
    }
}
