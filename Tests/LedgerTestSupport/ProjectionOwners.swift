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

/// How many keys a key registry holds, and how many disagree with the projection rows that
/// carry the same keys: a registry row without such a row, or with another owner or claiming
/// event, and such a row without its registry row.
public struct RegistryAgreement: Equatable, Sendable, CustomStringConvertible {
    public let keys: Int
    public let disagreeing: Int

    public init(keys: Int, disagreeing: Int) {
        self.keys = keys
        self.disagreeing = disagreeing
    }

    public var description: String { "\(keys) keys, \(disagreeing) disagreeing" }
}

extension Connection {
    /// Every key registry of the live schema, by name, against the rows that carry its keys:
    /// each payment and alias for `payment_keys` (with the payment each names), each payment's
    /// store transaction for `transaction_keys` (with the payment), each lineage for
    /// `lineage_keys`, the first Google payment of each purchase token whose event does not say it was
    /// another's already (`purchaseTokenClaimed`) for `token_keys`, each
    /// notification (under its owner now) for `notification_keys`.
    public func keyRegistryAgreement() throws -> [String: RegistryAgreement] {
        let registries: [(name: String, registry: String, carriers: String)] = [
            ("payment_keys", "SELECT payment_seq, user_id, position, names_seq FROM ledger.payment_keys",
             """
             SELECT payment_seq, user_id, recorded_position, payment_seq FROM ledger.payments
             UNION ALL SELECT alias_seq, user_id, position, payment_seq FROM ledger.payment_aliases
             """),
            ("transaction_keys", "SELECT store_code, transaction_id, user_id, position, payment_seq FROM ledger.transaction_keys",
             "SELECT store_code, transaction_id, user_id, recorded_position, payment_seq FROM ledger.payments"),
            ("lineage_keys", "SELECT store_code, lineage_id, user_id, position FROM ledger.lineage_keys",
             "SELECT store_code, original_transaction_id, user_id, first_position FROM ledger.lineages"),
            ("token_keys", "SELECT token_sha256, user_id, position FROM ledger.token_keys",
             """
             SELECT DISTINCT ON (p.token_sha256) p.token_sha256, p.user_id, p.recorded_position FROM ledger.payments p
               JOIN ledger.events e ON e.user_id = p.user_id AND e.position = p.recorded_position
              WHERE p.store_code = 'GG' AND p.token_sha256 IS NOT NULL AND NOT e.data ? 'purchaseTokenClaimed'
              ORDER BY p.token_sha256, p.recorded_position
             """),
            ("notification_keys", "SELECT store_code, notification_id, user_id, position FROM ledger.notification_keys",
             "SELECT store_code, notification_id, user_id, position FROM ledger.notifications"),
        ]
        let sql = registries.map { r in
            """
            SELECT '\(r.name)' AS name, (SELECT count(*) FROM (\(r.registry)) k) AS keys,
                   (SELECT count(*) FROM (((\(r.registry)) EXCEPT ALL (\(r.carriers)))
                                          UNION ALL ((\(r.carriers)) EXCEPT ALL (\(r.registry)))) d) AS disagreeing
            """
        }.joined(separator: "\nUNION ALL\n")
        let rows = try query(SQL(unsafeSQL: sql))
        return Dictionary(uniqueKeysWithValues: try rows.map {
            (try $0.decode("name", as: String.self),
             RegistryAgreement(keys: try $0.decode("keys", as: Int.self), disagreeing: try $0.decode("disagreeing", as: Int.self)))
        })
    }
}

extension Connection {
    /// Every stream of the log against the owner of the key its name is made of: a paymentSeq
    /// (`payment:`), a lineage (`lineage:`), a store notification id (`notification:`), each
    /// asked of its registry; an account token (`account:`), asked of `account_links`; a
    /// restore's user (`restore:`, the owner itself); a product (`product:`, no user: `''`).
    /// A stream whose owner is not its key's (or of a name of another shape) disagrees. When
    /// none does, the key registries keep the stream names unique across owners as well, which
    /// the log's keys, beginning with the owner, leave to them.
    public func streamKeyAgreement() throws -> (streams: Int, disagreeing: Int) {
        let row = try query("""
            SELECT count(*) AS streams, count(*) FILTER (WHERE o.key_owner IS DISTINCT FROM s.user_id) AS disagreeing
              FROM ledger.streams s
              CROSS JOIN LATERAL (SELECT CASE
                  WHEN s.stream LIKE 'payment:%' THEN
                       (SELECT k.user_id FROM ledger.payment_keys k WHERE k.payment_seq = substr(s.stream, 9))
                  WHEN s.stream LIKE 'lineage:%' THEN
                       (SELECT k.user_id FROM ledger.lineage_keys k
                         WHERE k.store_code = split_part(s.stream, ':', 2) AND k.lineage_id = substr(s.stream, 12))
                  WHEN s.stream LIKE 'notification:%' THEN
                       (SELECT k.user_id FROM ledger.notification_keys k
                         WHERE k.store_code = split_part(s.stream, ':', 2) AND k.notification_id = substr(s.stream, 17))
                  WHEN s.stream LIKE 'account:%' THEN
                       (SELECT a.user_id FROM ledger.account_links a
                         WHERE a.store_code = split_part(s.stream, ':', 2) AND a.app_account_token = substr(s.stream, 12))
                  WHEN s.stream LIKE 'restore:%' THEN substr(s.stream, 12)
                  WHEN s.stream LIKE 'product:%' THEN ''
                  END AS key_owner) o
            """)[0]
        return (try row.decode("streams", as: Int.self), try row.decode("disagreeing", as: Int.self))
    }
}
