-- Makes <target>.lineage_states (if missing) and <target>.refresh_states(stores, lineages, since,
-- owner):
-- each subscription lineage's state over time, so that ledger.subscriptions_at reads a lineage
-- at an instant with one backward index step instead of aggregating its payments
-- (BENCHMARKS.md, "subscriptions --at from lineage states").
--
-- What a lineage looks like at an instant t (docs/contract.md §3.2, billing states §5) changes only
-- at its change points: the purchase times of its payments, their refund, refund-reversal and
-- extension times (those at or after the purchase), and the times of its billing states and
-- auto-renew changes. Between two
-- change points every input is the same, except comparisons with t itself (is the live
-- payment's expiry after t, the grace period's end, a refunded payment's expiry), which the
-- query makes. So a row per change point holds the state from that instant (valid_from) until
-- the next row:
--   * first_purchase: the lineage's earliest purchase time by then;
--   * latest_payment_seq: the live payment (the greatest expiry among the payments not refunded
--     then, NULLs first as in ORDER BY … DESC, then the latest purchase), else the latest payment;
--   * live_expiry: that live payment's expiry (the lineage is active while it is after t);
--   * revoked_until: the greatest expiry among the payments refunded then (revoked while after t);
--   * auto_renewing: off only when the latest auto-renew change by then turned it off and came
--     after the lineage's latest purchase;
--   * billing_state: the latest billing state by then ((changed_at, position) order), unless it
--     is 'none' or a renewal was purchased after it; grace_expires_at with 'inGracePeriod'.
--
-- Kept incrementally: a change to a payment touches only instants at or after that payment's
-- purchase time, and a billing or auto-renew change only instants at or after its own time, so
-- ledger.entitled_spans_step defers each touched lineage with the earliest such instant
-- (`since`), and this function computes the change points from there on again, leaving the
-- rows before it. An in-order renewal recomputes one row; a replay computes every lineage
-- from -infinity, set-based (no lookup per row: a replay loads without secondary indexes).
--
-- Computed in one ordered pass over each lineage's timeline (its payments and change points
-- in time order), with running window aggregates, so the work grows with the lineage's
-- length, not with its square as a join of every point with every earlier payment would
-- (BENCHMARKS.md, "Lineage states in one ordered pass"). Only payments refunded or extended at
-- some time (few) depend on the instant: they are carried along and judged at each point.
-- The payments are never joined with the points: under a generic plan the row counts of the
-- CTEs are guesses, and a nested loop between the two would be quadratic again.
-- `ledger verify` compares the live rows, kept this way, with a replay's.
CREATE OR REPLACE FUNCTION ledger.install_lineage_states(target text)
RETURNS void
LANGUAGE plpgsql
-- The caller's search_path comes back at exit (the body sets the target's).
SET search_path = pg_catalog, pg_temp
AS $install$
BEGIN
    -- Static SQL, the same text in every schema: created in the target, whose projection
    -- tables the unqualified names are (SET search_path FROM CURRENT; install_project_range.sql).
    PERFORM set_config('search_path', format('%I, pg_catalog, pg_temp', target), true);
    CREATE TABLE IF NOT EXISTS lineage_states (
        store_code          text NOT NULL,
        lineage_id          text NOT NULL,
        valid_from          timestamptz NOT NULL,
        first_purchase      timestamptz NOT NULL,
        latest_payment_seq  text NOT NULL,
        live_expiry         timestamptz,
        revoked_until       timestamptz,
        auto_renewing       boolean NOT NULL,
        billing_state       text,
        grace_expires_at    timestamptz,
        user_id             text NOT NULL,  -- the lineage's user
        PRIMARY KEY (store_code, lineage_id, valid_from, user_id)
    );
    GRANT SELECT ON lineage_states TO ledger_reader, ledger_writer;

    -- Generic plans, no sequential scans, no JIT: as project_range (install_project_range.sql).
    -- state_owners: the owners of these lineages, all of one shard, or null, a filter of its own
    -- on every table on a Citus cluster, left out on one server, as refresh_spans has it
    -- (install_entitled_spans.sql). A database made before the owners were named may hold
    -- refresh_states(text[], text[], timestamptz[]), and one made before a shard's owners were,
    -- refresh_states(text[], text[], timestamptz[], text): dropped here.
    DROP FUNCTION IF EXISTS refresh_states(text[], text[], timestamptz[]);
    DROP FUNCTION IF EXISTS refresh_states(text[], text[], timestamptz[], text);
    CREATE OR REPLACE FUNCTION refresh_states(state_stores text[], state_lineages text[],
                                              state_since timestamptz[], state_owners text[])
    RETURNS void
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
    SET plan_cache_mode = force_generic_plan
    SET jit = off
    SET enable_seqscan = off
    AS $body$
    BEGIN
        DELETE FROM lineage_states s
         USING unnest(state_stores, state_lineages, state_since) t(store_code, lineage_id, since)
         WHERE s.store_code = t.store_code AND s.lineage_id = t.lineage_id AND s.valid_from >= t.since
           AND (state_owners IS NULL OR s.user_id = ANY (state_owners));

        INSERT INTO lineage_states (store_code, lineage_id, valid_from, first_purchase, latest_payment_seq,
                                         live_expiry, revoked_until, auto_renewing, billing_state,
                                         grace_expires_at, user_id)
        WITH due AS (
            SELECT * FROM unnest(state_stores, state_lineages, state_since) t(store_code, lineage_id, since)
        ), lp AS (
            -- Every payment of each due lineage (the running figures start at its first).
            SELECT t.store_code, t.lineage_id, t.since, p.purchase_time, p.payment_seq, p.user_id,
                   p.transaction_id <> p.lineage_id AS renewal, p.expiry_time, p.extended_expiry_time,
                   p.extended_at, p.refunded_at, p.reversed_refund_at, p.refund_reversed_at,
                   -- Never refunded nor extended: the same expiry at every instant.
                   p.refunded_at IS NULL AND p.reversed_refund_at IS NULL AND p.extended_at IS NULL AS plain
              FROM due t
              JOIN payments p ON p.store_code = t.store_code AND p.lineage_id = t.lineage_id
                             AND (state_owners IS NULL OR p.user_id = ANY (state_owners))
        ), points AS (
            SELECT p.store_code, p.lineage_id, c.at
              FROM lp p
             CROSS JOIN LATERAL (VALUES (p.purchase_time), (p.refunded_at), (p.reversed_refund_at),
                                        (p.refund_reversed_at), (p.extended_at)) c(at)
             -- A payment changes nothing before its purchase (a refund or an extension
             -- dated earlier counts from the purchase on, which is a point of its own).
             WHERE c.at >= p.since AND c.at >= p.purchase_time
            UNION
            SELECT t.store_code, t.lineage_id, b.changed_at
              FROM due t
              JOIN billing_states b
                ON b.store_code = t.store_code AND b.original_transaction_id = t.lineage_id
               AND (state_owners IS NULL OR b.user_id = ANY (state_owners))
             WHERE b.changed_at >= t.since
            UNION
            SELECT t.store_code, t.lineage_id, a.changed_at
              FROM due t
              JOIN auto_renew_changes a
                ON a.store_code = t.store_code AND a.original_transaction_id = t.lineage_id
               AND (state_owners IS NULL OR a.user_id = ANY (state_owners))
             WHERE a.changed_at >= t.since
        ), timeline AS (
            -- Each lineage's payments and change points in time order (a payment before a
            -- point at its own instant), numbered in that order: pos.
            SELECT e.*, row_number() OVER w AS pos
              FROM (SELECT store_code, lineage_id, purchase_time AS at, false AS point, payment_seq, renewal,
                           plain, expiry_time, extended_expiry_time, extended_at, refunded_at,
                           reversed_refund_at, refund_reversed_at, user_id
                      FROM lp
                    UNION ALL
                    SELECT store_code, lineage_id, at, true, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
                      FROM points) e
            WINDOW w AS (PARTITION BY e.store_code, e.lineage_id ORDER BY e.at, e.point, e.payment_seq)
        ), running AS (
            -- What the payments so far give at each row, in the same pass. The live payment
            -- has the greatest expiry (none is greatest, as NULLs first in ORDER BY … DESC),
            -- then the greatest pos (the latest purchase): among the plain payments a running
            -- max of [expiry_order, pos]. The others (few) are collected, to be judged at
            -- each point as they stand then.
            SELECT t.*,
                   min(t.at) FILTER (WHERE NOT t.point) OVER w AS first_purchase,
                   max(t.at) FILTER (WHERE NOT t.point) OVER w AS last_purchase,
                   max(t.at) FILTER (WHERE NOT t.point AND t.renewal) OVER w AS last_renewal,
                   max(t.pos) FILTER (WHERE NOT t.point) OVER w AS latest_pos,
                   -- The lineage's user (every payment of a lineage is that user's).
                   max(t.user_id) FILTER (WHERE NOT t.point) OVER w AS owner,
                   max(ARRAY[ledger.expiry_order(t.expiry_time), t.pos]) FILTER (WHERE NOT t.point AND t.plain) OVER w
                       AS plain_live,
                   array_agg(t.pos) FILTER (WHERE NOT t.point AND NOT t.plain) OVER w AS o_pos,
                   array_agg(t.payment_seq) FILTER (WHERE NOT t.point AND NOT t.plain) OVER w AS o_seq,
                   array_agg(ARRAY[t.expiry_time, t.extended_expiry_time, t.extended_at, t.refunded_at,
                                   t.reversed_refund_at, t.refund_reversed_at])
                       FILTER (WHERE NOT t.point AND NOT t.plain) OVER w AS o_times
              FROM timeline t
            WINDOW w AS (PARTITION BY t.store_code, t.lineage_id ORDER BY t.at, t.point, t.payment_seq
                         ROWS UNBOUNDED PRECEDING)
        ), read_back AS (
            -- The latest payment's seq and the plain live one's seq and expiry, read back by pos.
            SELECT r.*,
                   nth_value(r.payment_seq, r.latest_pos::int) OVER w AS latest_seq,
                   nth_value(r.payment_seq, r.plain_live[2]::int) OVER w AS plain_seq,
                   nth_value(r.expiry_time, r.plain_live[2]::int) OVER w AS plain_expiry
              FROM running r
            WINDOW w AS (PARTITION BY r.store_code, r.lineage_id ORDER BY r.at, r.point, r.payment_seq
                         ROWS UNBOUNDED PRECEDING)
        ), paid AS (
            -- Each change point from the lineage's first payment on, with its live payment: the
            -- best of the others at that instant when it sorts after the plain one's.
            SELECT b.store_code, b.lineage_id, b.at, b.first_purchase, b.last_purchase, b.last_renewal,
                   o.revoked_until, b.latest_seq, b.owner,
                   CASE WHEN w.other THEN o.seq ELSE b.plain_seq END AS live_seq,
                   CASE WHEN w.other THEN o.expiry ELSE b.plain_expiry END AS live_expiry
              FROM read_back b
              LEFT JOIN LATERAL (
                   SELECT max(u.expiry) FILTER (WHERE u.refunded) AS revoked_until,
                          (array_agg(u.pos ORDER BY u.expiry DESC, u.pos DESC) FILTER (WHERE NOT u.refunded))[1] AS pos,
                          (array_agg(u.seq ORDER BY u.expiry DESC, u.pos DESC) FILTER (WHERE NOT u.refunded))[1] AS seq,
                          (array_agg(u.expiry ORDER BY u.expiry DESC, u.pos DESC) FILTER (WHERE NOT u.refunded))[1] AS expiry
                     FROM (SELECT b.o_pos[i] AS pos, b.o_seq[i] AS seq,
                                  ledger.refunded_at_instant(b.o_times[i][4], b.o_times[i][5], b.o_times[i][6], b.at) AS refunded,
                                  ledger.expiry_at_instant(b.o_times[i][1], b.o_times[i][2], b.o_times[i][3], b.at) AS expiry
                             FROM generate_subscripts(b.o_pos, 1) i) u
                   ) o ON b.o_pos IS NOT NULL
             CROSS JOIN LATERAL (
                   SELECT o.pos IS NOT NULL
                          AND (b.plain_live IS NULL OR ARRAY[ledger.expiry_order(o.expiry), o.pos] > b.plain_live) AS other) w
             WHERE b.point AND b.latest_pos IS NOT NULL
        ), billing AS (
            SELECT DISTINCT ON (pt.store_code, pt.lineage_id, pt.at)
                   pt.store_code, pt.lineage_id, pt.at, b.state, b.changed_at, b.grace_expires_at
              FROM points pt
              JOIN billing_states b
                ON b.store_code = pt.store_code AND b.original_transaction_id = pt.lineage_id AND b.changed_at <= pt.at
               AND (state_owners IS NULL OR b.user_id = ANY (state_owners))
             ORDER BY pt.store_code, pt.lineage_id, pt.at, b.changed_at DESC, b.position DESC
        ), renewing AS (
            SELECT DISTINCT ON (pt.store_code, pt.lineage_id, pt.at)
                   pt.store_code, pt.lineage_id, pt.at, a.auto_renewing, a.changed_at
              FROM points pt
              JOIN auto_renew_changes a
                ON a.store_code = pt.store_code AND a.original_transaction_id = pt.lineage_id AND a.changed_at <= pt.at
               AND (state_owners IS NULL OR a.user_id = ANY (state_owners))
             ORDER BY pt.store_code, pt.lineage_id, pt.at, a.changed_at DESC, a.position DESC
        )
        SELECT d.store_code, d.lineage_id, d.at, d.first_purchase, coalesce(d.live_seq, d.latest_seq),
               d.live_expiry, d.revoked_until,
               r.auto_renewing IS NULL OR r.auto_renewing OR r.changed_at < d.last_purchase,
               s.state,
               CASE WHEN s.state = 'inGracePeriod' THEN s.grace_expires_at END, d.owner
          FROM paid d
          LEFT JOIN renewing r ON r.store_code = d.store_code AND r.lineage_id = d.lineage_id AND r.at = d.at
          -- A billing state holds from its time until a renewal paid after it.
          LEFT JOIN billing s
            ON s.store_code = d.store_code AND s.lineage_id = d.lineage_id AND s.at = d.at
           AND s.state <> 'none' AND NOT coalesce(d.last_renewal > s.changed_at, false);
    END
    $body$;
    REVOKE ALL ON FUNCTION refresh_states(text[], text[], timestamptz[], text[]) FROM PUBLIC;
    IF NOT ledger.distributed_log() THEN
        PERFORM ledger.drop_owner_filters('refresh_states(text[], text[], timestamptz[], text[])'::regprocedure, 'state_owners');
    ELSE
        -- On a cluster, the statements on the owners' shard tables where this node holds them.
        PERFORM ledger.install_shard_path('refresh_states(text[], text[], timestamptz[], text[])'::regprocedure,
                                          'state_owners',
                                          ARRAY['lineage_states', 'payments', 'billing_states', 'auto_renew_changes']);
    END IF;
END
$install$;
REVOKE ALL ON FUNCTION ledger.install_lineage_states(text) FROM PUBLIC;
