import Foundation
import LedgerDemo
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// `ledger.entitled_spans`, which project_range keeps as events are appended: analytics.access
/// reads from it the same intervals that building and sorting them on every call gives, and an
/// append, a batch and a rebuild leave the same rows.
@Suite("Maintained entitled spans")
struct EntitledSpansTests {
    /// The reference: the spans merged on every call (entitlement_spans and access, their text at
    /// commit ae99a90), in a schema of their own.
    static let mergedPerQuery = """
        CREATE SCHEMA merged_per_query;
        CREATE OR REPLACE FUNCTION merged_per_query.entitlement_spans(p_lo timestamptz, p_hi timestamptz, p_include_sandbox boolean DEFAULT false)
        RETURNS TABLE (store_code text, product_id text, lineage_id text, starts_at timestamptz,
                       ends_at timestamptz, cause text)
        LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT p.store_code, p.product_id, p.lineage_id, s.starts_at, s.ends_at,
               CASE WHEN s.ends_at < e.ends_at THEN 'refund' ELSE 'expiry' END
          FROM ledger.payments p
         CROSS JOIN LATERAL (
               SELECT p.purchase_time, least(p.expiry_time, p.extended_at)
               UNION ALL
               SELECT greatest(p.purchase_time, p.extended_at), p.extended_expiry_time WHERE p.extended_at IS NOT NULL
               ) e(starts_at, ends_at)
         CROSS JOIN LATERAL (
               SELECT e.starts_at, least(e.ends_at, p.refunded_at, p.reversed_refund_at)
               UNION ALL
               SELECT greatest(e.starts_at, p.refund_reversed_at), least(e.ends_at, p.refunded_at)
                WHERE p.reversed_refund_at IS NOT NULL
               ) s(starts_at, ends_at)
         WHERE p.lineage_id IS NOT NULL
           AND p.purchase_time <= p_hi
           AND greatest(p.expiry_time, p.extended_expiry_time) >= p_lo
           AND (p.refunded_at IS NULL OR p.refunded_at >= p_lo)
           AND (p_include_sandbox OR NOT p.sandbox_payment)
           AND s.ends_at > s.starts_at
        UNION ALL
        SELECT b.store_code, l.product_id, b.original_transaction_id,
               greatest(b.changed_at, q.first_purchase),
               coalesce(least(b.grace_expires_at, next.changed_at, q.first_renewal), 'infinity'),
               'billing'
          FROM ledger.billing_states b
          JOIN ledger.lineages l ON l.store_code = b.store_code AND l.original_transaction_id = b.original_transaction_id
         CROSS JOIN LATERAL (
               SELECT min(r.purchase_time) AS first_purchase,
                      min(r.purchase_time) FILTER (WHERE r.transaction_id <> r.lineage_id AND r.purchase_time > b.changed_at) AS first_renewal,
                      bool_or(NOT r.sandbox_payment) AS live
                 FROM ledger.payments r
                WHERE r.store_code = b.store_code AND r.lineage_id = b.original_transaction_id) q
          LEFT JOIN LATERAL (
               SELECT n.changed_at
                 FROM ledger.billing_states n
                WHERE n.store_code = b.store_code AND n.original_transaction_id = b.original_transaction_id
                  AND (n.changed_at, n.position) > (b.changed_at, b.position)
                ORDER BY n.changed_at, n.position
                LIMIT 1) next ON true
         WHERE b.state = 'inGracePeriod'
           AND b.changed_at <= p_hi
           AND coalesce(b.grace_expires_at, 'infinity') >= p_lo
           AND q.first_purchase IS NOT NULL
           AND (p_include_sandbox OR q.live)
           AND coalesce(least(b.grace_expires_at, next.changed_at, q.first_renewal), 'infinity') > greatest(b.changed_at, q.first_purchase)
        $$;
        CREATE OR REPLACE FUNCTION merged_per_query.access(p_lo timestamptz, p_hi timestamptz, p_include_sandbox boolean DEFAULT false)
        RETURNS TABLE (store_code text, product_id text, original_transaction_id text, starts_at timestamptz,
                       ends_at timestamptz, ended_by_refund boolean, ended_by_billing boolean)
        LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT c.store_code, c.product_id, c.lineage_id, c.interval_start, c.interval_end,
               c.natural_end IS DISTINCT FROM c.interval_end AND c.billing_end IS DISTINCT FROM c.interval_end,
               c.natural_end IS DISTINCT FROM c.interval_end AND c.billing_end = c.interval_end
          FROM (SELECT o.store_code, o.product_id, o.lineage_id,
                       max(CASE WHEN o.opens THEN o.starts_at END) OVER w AS interval_start,
                       max(o.ends_at) OVER w AS interval_end,
                       max(o.ends_at) FILTER (WHERE o.cause = 'expiry') OVER w AS natural_end,
                       max(o.ends_at) FILTER (WHERE o.cause = 'billing') OVER w AS billing_end,
                       coalesce(lead(o.opens) OVER w, true) AS closes
                  FROM (SELECT s.*,
                               coalesce(s.starts_at > max(s.ends_at) OVER (PARTITION BY s.store_code COLLATE "C", s.lineage_id COLLATE "C"
                                                                         ORDER BY s.starts_at, s.ends_at
                                                                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                                        true) AS opens
                          FROM merged_per_query.entitlement_spans(p_lo, p_hi, p_include_sandbox) s) o
                WINDOW w AS (PARTITION BY o.store_code COLLATE "C", o.lineage_id COLLATE "C" ORDER BY o.starts_at, o.ends_at
                             ROWS UNBOUNDED PRECEDING)) c
         WHERE c.closes
        $$;
        """

    /// Histories with every kind of change to entitled time: grace periods, billing retry,
    /// extensions, a reversed refund, notifications out of order, the analytics fixture's
    /// refunds and sandbox payments, and a year of demo traffic with its refunds and cancels.
    static func load(_ c: Connection) throws {
        try EntitledAnalyticsTests.load(c)
        try AnalyticsFixture.load(into: c)
        let outcomes = try c.ingest(Array(DemoGenerator(seed: 11, users: 150)))
        #expect(outcomes.filter { $0.status != .rejected }.count > 500)
    }

    /// Rows of a query as text, sorted.
    static func rows(_ c: Connection, _ sql: String) throws -> [String] {
        try c.query(SQL(unsafeSQL: "SELECT x::text AS line FROM (\(sql)) x ORDER BY 1")).map { try $0.decode("line") }
    }

    @Test func accessGivesTheIntervalsThePerQueryMergeGave() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try Self.load(c)
                try c.executeScript(unsafeSQL: Self.mergedPerQuery)
                #expect(try c.count("SELECT count(*) FROM ledger.entitled_spans") > 500)
                let windows = [("2026-01-01", "2026-02-01"), ("2026-02-01", "2026-08-01"), ("2026-03-20", "2026-04-06"),
                               ("2026-04-01", "2026-04-08"), ("2025-01-01", "2028-01-01"), ("2026-06-15", "2026-07-16")]
                var compared = 0
                for (lo, hi) in windows {
                    for sandbox in [false, true] {
                        let args = "'\(lo)T00:00:00Z', '\(hi)T00:00:00Z', \(sandbox)"
                        // The exact part: every interval that ends in [lo, hi), with what ended it,
                        // and every interval that starts in (lo, hi], whole.
                        // (The merge's ended_by_billing is null, not false, for an interval a
                        // refund ended with no billing state: compared as false, here and below.)
                        let ends = "SELECT store_code, product_id, original_transaction_id, ends_at, ended_by_refund, coalesce(ended_by_billing, false) FROM %@ WHERE ends_at >= '\(lo)T00:00:00Z' AND ends_at < '\(hi)T00:00:00Z'"
                        let starts = "SELECT store_code, product_id, original_transaction_id, starts_at, ends_at, ended_by_refund, coalesce(ended_by_billing, false) FROM %@ WHERE starts_at > '\(lo)T00:00:00Z' AND starts_at <= '\(hi)T00:00:00Z'"
                        for query in [ends, starts] {
                            let before = try Self.rows(c, query.replacingOccurrences(of: "%@", with: "merged_per_query.access(\(args))"))
                            let now = try Self.rows(c, query.replacingOccurrences(of: "%@", with: "analytics.access(\(args))"))
                            #expect(try c.count("""
                                SELECT count(*) FROM analytics.access(\(args)) WHERE ended_by_refund IS NULL OR ended_by_billing IS NULL
                                """) == 0, "what ended an interval is true or false")
                            #expect(now == before, "\(lo) \(hi) sandbox \(sandbox)")
                            compared += before.count
                        }
                        // And the same lineages covered at every day's start within the window.
                        let covered = """
                            SELECT d, a.store_code, a.product_id, a.original_transaction_id
                              FROM generate_series('\(lo)T00:00:00Z'::timestamptz, '\(hi)T00:00:00Z', interval '1 day') d
                              JOIN %@ a ON a.starts_at <= d AND d < a.ends_at
                            """
                        #expect(try Self.rows(c, covered.replacingOccurrences(of: "%@", with: "analytics.access(\(args))"))
                                == (try Self.rows(c, covered.replacingOccurrences(of: "%@", with: "merged_per_query.access(\(args))"))))
                    }
                }
                #expect(compared > 300)
            }
        }
    }

    @Test func appendsOneByOneABatchAndARebuildLeaveTheSameSpans() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try Self.load(c)
                let live = try Self.rows(c, "SELECT * FROM ledger.entitled_spans")
                #expect(live.count > 500)
                // The whole log as one batch, and event by event, in shadow schemas.
                try c.executeScript(unsafeSQL: """
                    SELECT ledger.install_projections('spans_batch');
                    SELECT spans_batch.project_range(1, (SELECT max(position) FROM ledger.events));
                    SELECT ledger.install_projections('spans_one');
                    DO $$ DECLARE p bigint;
                    BEGIN FOR p IN SELECT position FROM ledger.events ORDER BY position LOOP
                        PERFORM spans_one.project_range(p, p);
                    END LOOP; END $$;
                    """)
                #expect(try Self.rows(c, "SELECT * FROM spans_batch.entitled_spans") == live)
                #expect(try Self.rows(c, "SELECT * FROM spans_one.entitled_spans") == live)
                // A rebuild in small batches, which split lineages across calls.
                try ProjectionRebuilder(connection: c, batchSize: 37).rebuild()
                #expect(try Self.rows(c, "SELECT * FROM ledger.entitled_spans") == live)
            }
        }
    }

    /// Payments that arrive as sets (each round of an ingest batch is one `ledger.record_payments`,
    /// applied by `project_positions`) leave the spans that the same lines leave one at a time,
    /// and those that `project_range` gives when it replays the whole log.
    @Test func paymentsRecordedAsSetsLeaveTheSpansOfOneAtATime() async throws {
        let lines = AnalyticsFixture.early + [AnalyticsFixture.lateRenewal] + Array(DemoGenerator(seed: 23, users: 120))
        func spans(batchSize: Int) async throws -> (live: [String], replayed: [String]) {
            try await TestDatabase.with { db in
                try db.withConnection { c throws in
                    let outcomes = try c.ingest(lines, batchSize: batchSize)
                    #expect(outcomes.filter { $0.status != .rejected }.count > 400)
                    try c.executeScript(unsafeSQL: """
                        SELECT ledger.install_projections('spans_replay');
                        SELECT spans_replay.project_range(1, (SELECT max(position) FROM ledger.events));
                        """)
                    return (try Self.rows(c, "SELECT * FROM ledger.entitled_spans"),
                            try Self.rows(c, "SELECT * FROM spans_replay.entitled_spans"))
                }
            }
        }
        let sets = try await spans(batchSize: 500)
        let alone = try await spans(batchSize: 1)
        #expect(sets.live.count > 300)
        #expect(sets.live == alone.live)
        #expect(sets.live == sets.replayed)
        #expect(alone.live == alone.replayed)
    }
}
