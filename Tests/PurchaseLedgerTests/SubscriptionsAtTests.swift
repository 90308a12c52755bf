import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// ledger.subscriptions_at, which reads each lineage with one backward step in
/// `ledger.lineage_states` (kept as events arrive), answers exactly what the reference answers:
/// the same query computed from each lineage's payments at every call.
@Suite("subscriptions_at from lineage states")
struct SubscriptionsAtTests {
    /// The reference: the function's text at commit ae99a90, in a schema of its own.
    static let previous = """
        CREATE SCHEMA previous_query;
        CREATE OR REPLACE FUNCTION previous_query.subscriptions_at(p_at timestamptz)
        RETURNS TABLE (user_id text, store_code text, product_id text, product_type text,
                       original_transaction_id text, latest_payment_seq text, purchase_time timestamptz,
                       expiry_time timestamptz, auto_renewing boolean, status text, entitled boolean,
                       grace_period_expiry_time timestamptz)
        LANGUAGE sql STABLE AS $$
        SELECT s.user_id, s.store_code, s.product_id, s.product_type, s.original_transaction_id,
               s.latest_payment_seq, s.purchase_time, s.expiry_time, s.auto_renewing, s.status,
               s.status IN ('active', 'inGracePeriod'),
               CASE WHEN s.status = 'inGracePeriod' THEN s.grace_expires_at END
          FROM (
            SELECT l.user_id, l.store_code, l.product_id, l.product_type, l.original_transaction_id,
                   coalesce(live.payment_seq, latest.payment_seq) AS latest_payment_seq,
                   agg.first_purchase AS purchase_time,
                   live.expiry_time,
                   (ar.auto_renewing IS NULL OR ar.auto_renewing OR ar.changed_at < agg.last_purchase) AS auto_renewing,
                   CASE WHEN live.expiry_time > p_at THEN 'active'
                        -- A billing state holds from its time until a renewal paid after it.
                        WHEN bs.state IS NOT NULL AND bs.state <> 'none'
                             AND NOT coalesce(agg.last_renewal > bs.changed_at, false) THEN
                             CASE WHEN bs.state <> 'inGracePeriod' THEN bs.state
                                  WHEN bs.grace_expires_at IS NULL OR bs.grace_expires_at > p_at THEN 'inGracePeriod'
                                  ELSE 'billingRetry' END
                        WHEN agg.revoked THEN 'revoked'
                        ELSE 'expired' END AS status,
                   bs.grace_expires_at
              FROM ledger.lineages l
              CROSS JOIN LATERAL (
                    SELECT min(p.purchase_time) AS first_purchase,
                           max(p.purchase_time) AS last_purchase,
                           max(p.purchase_time) FILTER (WHERE p.transaction_id <> p.lineage_id) AS last_renewal,
                           coalesce(bool_or(ledger.refunded_at_instant(p.refunded_at, p.reversed_refund_at, p.refund_reversed_at, p_at)
                                            AND ledger.expiry_at_instant(p.expiry_time, p.extended_expiry_time, p.extended_at, p_at) > p_at),
                                    false) AS revoked
                      FROM ledger.payments p
                     WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
                       AND p.purchase_time <= p_at) agg
              LEFT JOIN LATERAL (
                    SELECT p.payment_seq, ledger.expiry_at_instant(p.expiry_time, p.extended_expiry_time, p.extended_at, p_at) AS expiry_time
                      FROM ledger.payments p
                     WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
                       AND p.purchase_time <= p_at
                       AND NOT ledger.refunded_at_instant(p.refunded_at, p.reversed_refund_at, p.refund_reversed_at, p_at)
                     ORDER BY 2 DESC, p.purchase_time DESC, p.payment_seq DESC
                     LIMIT 1) live ON true
              LEFT JOIN LATERAL (
                    SELECT p.payment_seq
                      FROM ledger.payments p
                     WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
                       AND p.purchase_time <= p_at
                     ORDER BY p.purchase_time DESC, p.payment_seq DESC
                     LIMIT 1) latest ON true
              LEFT JOIN LATERAL (
                    SELECT c.auto_renewing, c.changed_at
                      FROM ledger.auto_renew_changes c
                     WHERE c.store_code = l.store_code AND c.original_transaction_id = l.original_transaction_id
                       AND c.changed_at <= p_at
                     ORDER BY c.changed_at DESC, c.position DESC
                     LIMIT 1) ar ON true
              LEFT JOIN LATERAL (
                    SELECT b.state, b.changed_at, b.grace_expires_at
                      FROM ledger.billing_states b
                     WHERE b.store_code = l.store_code AND b.original_transaction_id = l.original_transaction_id
                       AND b.changed_at <= p_at
                     ORDER BY b.changed_at DESC, b.position DESC
                     LIMIT 1) bs ON true
             WHERE agg.first_purchase IS NOT NULL) s
        $$;
        """

    @Test func everyLineageAtEveryInstantIsWhatThePreviousFunctionSaid() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                // Grace periods, billing retry, extensions, a reversed refund, notifications out
                // of order, refunds, sandbox payments, cancels and a year of demo traffic.
                try EntitledSpansTests.load(c)
                try c.executeScript(unsafeSQL: Self.previous)
                let grid = "generate_series('2025-12-01T00:00:00Z'::timestamptz, '2027-01-01T00:00:00Z', interval '61 hours') t"
                let now = try EntitledSpansTests.rows(c, "SELECT t, s.* FROM \(grid) CROSS JOIN LATERAL ledger.subscriptions_at(t) s")
                let before = try EntitledSpansTests.rows(c, "SELECT t, s.* FROM \(grid) CROSS JOIN LATERAL previous_query.subscriptions_at(t) s")
                #expect(now.count > 5000)
                #expect(now == before)
                // Every status the rule knows appears, so the comparison covers each branch.
                let statuses = try EntitledSpansTests.rows(c, "SELECT DISTINCT s.status FROM \(grid) CROSS JOIN LATERAL ledger.subscriptions_at(t) s")
                #expect(Set(statuses).isSuperset(of: ["active", "billingRetry", "expired", "inGracePeriod", "revoked"].map { "(\($0))" }))
            }
        }
    }

    /// One user's lineages (`ledger.user_subscriptions_at`, what `ledger subscriptions`, the HTTP
    /// API and the console ask, and a Citus cluster runs) are every user's
    /// (`ledger.subscriptions_at`) of that user, for every user and every instant of the grid.
    @Test func oneUsersLineagesAreEveryUsersOfThatUser() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try EntitledSpansTests.load(c)
                // Every 8 days (a call per user and instant: the 61 hours of the tests above took
                // 23 s here); the instants still fall in every status.
                let grid = "generate_series('2025-12-01T00:00:00Z'::timestamptz, '2027-01-01T00:00:00Z', interval '8 days') t"
                let users = "(SELECT DISTINCT user_id FROM ledger.lineages UNION SELECT 'no such user') u(id)"
                let one = try EntitledSpansTests.rows(c, "SELECT t, s.* FROM \(grid) CROSS JOIN \(users) CROSS JOIN LATERAL ledger.user_subscriptions_at(u.id, t) s")
                let all = try EntitledSpansTests.rows(c, "SELECT t, s.* FROM \(grid) CROSS JOIN LATERAL ledger.subscriptions_at(t) s")
                #expect(one.count > 1000)
                #expect(one == all)
                let statuses = try EntitledSpansTests.rows(c, "SELECT DISTINCT s.status FROM \(grid) CROSS JOIN \(users) CROSS JOIN LATERAL ledger.user_subscriptions_at(u.id, t) s")
                #expect(Set(statuses).isSuperset(of: ["active", "billingRetry", "expired", "inGracePeriod", "revoked"].map { "(\($0))" }))
            }
        }
    }

    /// The states are exact at their edges: for every lineage with a billing state, an auto-renew
    /// change, a refund or an extension, at each of its change points, a microsecond before each,
    /// and at and just before each expiry and grace end, the lineage is what the aggregate said.
    @Test func atEveryChangePointAndJustBeforeItALineageIsWhatThePreviousFunctionSaid() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try EntitledSpansTests.load(c)
                try c.executeScript(unsafeSQL: Self.previous)
                try c.executeScript(unsafeSQL: """
                    CREATE TEMP TABLE edge_lineages AS
                    SELECT store_code, lineage_id FROM ledger.payments
                     WHERE lineage_id IS NOT NULL
                       AND (refunded_at IS NOT NULL OR reversed_refund_at IS NOT NULL OR extended_at IS NOT NULL)
                    UNION SELECT store_code, original_transaction_id FROM ledger.billing_states
                    UNION SELECT store_code, original_transaction_id FROM ledger.auto_renew_changes;
                    CREATE TEMP TABLE edges AS
                    SELECT DISTINCT x.store_code, x.lineage_id, x.t + d.shift AS t
                      FROM (SELECT s.store_code, s.lineage_id, s.valid_from AS t FROM ledger.lineage_states s
                            UNION SELECT p.store_code, p.lineage_id, p.expiry_time FROM ledger.payments p
                            UNION SELECT p.store_code, p.lineage_id, p.extended_expiry_time FROM ledger.payments p
                            UNION SELECT b.store_code, b.original_transaction_id, b.grace_expires_at FROM ledger.billing_states b) x
                      JOIN edge_lineages USING (store_code, lineage_id)
                     CROSS JOIN (VALUES (interval '0'), (interval '-1 microsecond')) d(shift)
                     WHERE x.t IS NOT NULL;
                    """)
                let pairs = "FROM edges e CROSS JOIN LATERAL %@(e.t) s WHERE s.store_code = e.store_code AND s.original_transaction_id = e.lineage_id"
                let now = try EntitledSpansTests.rows(c, "SELECT e.t, s.* " + pairs.replacingOccurrences(of: "%@", with: "ledger.subscriptions_at"))
                let before = try EntitledSpansTests.rows(c, "SELECT e.t, s.* " + pairs.replacingOccurrences(of: "%@", with: "previous_query.subscriptions_at"))
                #expect(now.count > 300)
                #expect(now == before)
                let statuses = try EntitledSpansTests.rows(c, "SELECT DISTINCT s.status " + pairs.replacingOccurrences(of: "%@", with: "ledger.subscriptions_at"))
                #expect(Set(statuses).isSuperset(of: ["active", "billingRetry", "expired", "inGracePeriod", "revoked"].map { "(\($0))" }))
            }
        }
    }

    /// The states kept as the events arrived (renewals, refunds and notifications out of order,
    /// each lineage computed again only from its earliest changed instant) are the rows a replay
    /// of the whole log computes; a database from before the states gets them filled by its
    /// migration, and a rebuild in small batches leaves them as they were.
    @Test func statesKeptAsEventsArriveAreAReplaysAndAnUpgradeFillsThem() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try EntitledSpansTests.load(c)
                let live = try EntitledSpansTests.rows(c, "SELECT * FROM ledger.lineage_states")
                #expect(live.count > 400)
                try c.executeScript(unsafeSQL: """
                    SELECT ledger.install_projections('states_replay');
                    SELECT states_replay.project_range(1, (SELECT max(position) FROM ledger.events));
                    """)
                #expect(try EntitledSpansTests.rows(c, "SELECT * FROM states_replay.lineage_states") == live)

                try c.execute("DROP TABLE ledger.lineage_states")
                let liveDefinition = try #require(Definition.all.first { $0.path == "projections/live.sql" })
                try c.executeScript(unsafeSQL: liveDefinition.sql)
                #expect(try EntitledSpansTests.rows(c, "SELECT * FROM ledger.lineage_states") == live)

                try ProjectionRebuilder(connection: c, batchSize: 37).rebuild()
                #expect(try EntitledSpansTests.rows(c, "SELECT * FROM ledger.lineage_states") == live)
            }
        }
    }
}
