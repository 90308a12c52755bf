import Postgres

/// The migrations of the first releases, which kept every function's history in numbered files
/// (`0001_event_log.sql` … `0009_entitled_analytics.sql`), and how the migrator adopts a database
/// they made. Its log (`ledger.events`, `ledger.streams`), roles, schemas and result type are
/// exactly what `Schema/migrations/0001_baseline.sql` makes; everything else was derived:
///
/// - its views in schema `analytics`, the append-only triggers and every function in schemas
///   `ledger` and `analytics` are dropped (RESTRICT: an object of someone else's that depends
///   on one of them stops the adoption, naming it, instead of vanishing), and the definitions
///   make them again;
/// - its rows in `ledger.schema_migrations` are replaced by the baseline's;
/// - its projection tables stay until the migrator rebuilds them from the log, in the shape the
///   definitions give (a database of release 0007 lacks the tables of the stores'
///   notifications; one of 0006 still has the payments CHECK of 0002).
///
/// All in the migrator's transaction: a refusal leaves the database as it was.
enum LegacyMigrations {
    /// The released files, by name, with the SHA-256 of their text (as recorded when applied).
    /// Their text is kept in the tests (Tests/PurchaseLedgerTests/Fixtures/LegacySchema), which
    /// make such a database and adopt it.
    static let checksums: [String: String] = [
        "0001_event_log.sql": "5134715bde06e190f2dab2a0268fa9385e096125284e70f212f451ccb18ea408",
        "0002_projections.sql": "41834ec4ef5eed47ff076a231398e05b645cc8cbfdc18f28631e93153ac362bf",
        "0003_commands.sql": "b61738c1e2b9b86bd22f884d3e89a6a6b1e0087d526b25943bc87b2debd34db1",
        "0004_queries.sql": "0dac5c59fcc5ba9a6c35fac35cdce382a29526f3bfb272a93c9250cbacc48c7a",
        "0005_rebuild.sql": "91988e8b414e04acaceb92d99a6df65a0b15e6b2765520af9127d7508afb265f",
        "0006_analytics.sql": "8c7458a707856a8fc1f38d556ef7955688010b1f17b91f9f60d1e6b8ead3294b",
        "0007_cheaper_record.sql": "d34aebf6fa49bc0b5ad59f890ea877a77482e0d00afd27e08f659e78abd395bb",
        "0008_store_notifications.sql": "94acd64d4ffc333ccabe8747b2972ea7cc743e7312947b183522d96744c1fe05",
        "0009_entitled_analytics.sql": "6eadb637b80f9029242a8be4a82a7c663bcbed4401178fe273dbdcbb26473824",
    ]

    /// The views the first releases made.
    static let views = ["revenue_daily", "active_subscriptions_daily", "churn_daily", "refunds_daily", "unconsumed_backlog"]

    /// Adopts the database when `applied` holds migrations of the first releases; returns
    /// whether it did. Throws `MigrationError.changed` for a legacy file that is not the one
    /// released, and `.adoptionBlocked` when something of someone else's depends on an object
    /// to drop.
    static func adopt(_ tx: Connection, applied: [Int: (name: String, checksum: String)]) throws -> Bool {
        let legacy = applied.values.filter { checksums[$0.name] != nil }
        guard !legacy.isEmpty else { return false }
        for row in legacy where checksums[row.name] != row.checksum {
            throw MigrationError.changed(row.name)
        }
        do {
            for view in views {
                try tx.execute("DROP VIEW IF EXISTS analytics.\(identifier: view) RESTRICT")
            }
            try tx.executeScript(unsafeSQL: """
                DROP TRIGGER IF EXISTS events_append_only ON ledger.events;
                DROP TRIGGER IF EXISTS events_no_truncate ON ledger.events;
                """)
            // Functions that others of them depend on (SQL-standard bodies) go after those:
            // drop what can be dropped, and again, until nothing is left.
            while true {
                let functions = try tx.query("""
                    SELECT p.oid::regprocedure::text AS signature
                      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                     WHERE n.nspname IN ('ledger', 'analytics')
                       AND NOT EXISTS (SELECT FROM pg_depend d
                                        WHERE d.refclassid = 'pg_proc'::regclass AND d.refobjid = p.oid
                                          AND d.deptype = 'n')
                     ORDER BY 1
                    """).map { try $0.decode("signature", as: String.self) }
                if functions.isEmpty { break }
                for signature in functions {
                    try tx.executeScript(unsafeSQL: "DROP FUNCTION \(signature) RESTRICT")
                }
            }
        } catch let error as PostgresError where error.sqlState == SQLState("2BP01") {  // dependent_objects_still_exist
            // The detail names the dependent objects (catalog names, no row values).
            throw MigrationError.adoptionBlocked(error.message + (error.detail.map { ": " + $0 } ?? "")
                                                 + "; drop or move them, migrate, then make them again")
        }
        let remaining = try tx.query("""
            SELECT string_agg(p.oid::regprocedure::text, ', ') AS names
              FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname IN ('ledger', 'analytics')
            """)[0].decode("names", as: String?.self)
        if let remaining {
            throw MigrationError.adoptionBlocked("functions still needed by other objects: \(remaining)")
        }
        try tx.execute("DELETE FROM ledger.schema_migrations WHERE name = ANY(\(PostgresArray(elements: checksums.keys.sorted().map { .text($0) }))::text[])")
        return true
    }
}
