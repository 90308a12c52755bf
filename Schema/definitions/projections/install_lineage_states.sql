-- Makes <target>.lineage_states (if missing) and <target>.refresh_states(stores, lineages, since):
-- each subscription lineage's state over time, so that ledger.subscriptions_at reads a lineage
-- at an instant with one backward index step instead of aggregating its payments
-- (BENCHMARKS.md, "subscriptions --at from lineage states").
--
-- What a lineage looks like at an instant t (CONTRACT.md §3.2, billing states §5) changes only
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
-- `ledger verify` compares the live rows, kept this way, with a replay's.
CREATE OR REPLACE FUNCTION ledger.install_lineage_states(target text)
RETURNS void
LANGUAGE plpgsql AS $install$
BEGIN
    EXECUTE format($ddl$
        CREATE TABLE IF NOT EXISTS %1$I.lineage_states (
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
            PRIMARY KEY (store_code, lineage_id, valid_from)
        );
        GRANT SELECT ON %1$I.lineage_states TO ledger_reader, ledger_writer;

        -- Generic plans, no sequential scans, no JIT: as project_range (install_project_range.sql).
        CREATE OR REPLACE FUNCTION %1$I.refresh_states(state_stores text[], state_lineages text[],
                                                       state_since timestamptz[])
        RETURNS void
        LANGUAGE plpgsql
        SET plan_cache_mode = force_generic_plan
        SET jit = off
        SET enable_seqscan = off
        AS $body$
        BEGIN
            DELETE FROM %1$I.lineage_states s
             USING unnest(state_stores, state_lineages, state_since) t(store_code, lineage_id, since)
             WHERE s.store_code = t.store_code AND s.lineage_id = t.lineage_id AND s.valid_from >= t.since;

            INSERT INTO %1$I.lineage_states (store_code, lineage_id, valid_from, first_purchase, latest_payment_seq,
                                             live_expiry, revoked_until, auto_renewing, billing_state,
                                             grace_expires_at)
            WITH due AS (
                SELECT * FROM unnest(state_stores, state_lineages, state_since) t(store_code, lineage_id, since)
            ), points AS (
                SELECT t.store_code, t.lineage_id, c.at
                  FROM due t
                  JOIN %1$I.payments p ON p.store_code = t.store_code AND p.lineage_id = t.lineage_id
                 CROSS JOIN LATERAL (VALUES (p.purchase_time), (p.refunded_at), (p.reversed_refund_at),
                                            (p.refund_reversed_at), (p.extended_at)) c(at)
                 -- A payment changes nothing before its purchase (a refund or an extension
                 -- dated earlier counts from the purchase on, which is a point of its own).
                 WHERE c.at >= t.since AND c.at >= p.purchase_time
                UNION
                SELECT t.store_code, t.lineage_id, b.changed_at
                  FROM due t
                  JOIN %1$I.billing_states b
                    ON b.store_code = t.store_code AND b.original_transaction_id = t.lineage_id
                 WHERE b.changed_at >= t.since
                UNION
                SELECT t.store_code, t.lineage_id, a.changed_at
                  FROM due t
                  JOIN %1$I.auto_renew_changes a
                    ON a.store_code = t.store_code AND a.original_transaction_id = t.lineage_id
                 WHERE a.changed_at >= t.since
            ), paid AS (
                -- The payments made by each change point (none before the lineage's first).
                SELECT pt.store_code, pt.lineage_id, pt.at,
                       min(p.purchase_time) AS first_purchase,
                       max(p.purchase_time) AS last_purchase,
                       max(p.purchase_time) FILTER (WHERE p.transaction_id <> p.lineage_id) AS last_renewal,
                       max(x.expiry) FILTER (WHERE x.refunded) AS revoked_until,
                       (array_agg(p.payment_seq ORDER BY x.expiry DESC, p.purchase_time DESC, p.payment_seq DESC)
                          FILTER (WHERE NOT x.refunded))[1] AS live_seq,
                       (array_agg(x.expiry ORDER BY x.expiry DESC, p.purchase_time DESC, p.payment_seq DESC)
                          FILTER (WHERE NOT x.refunded))[1] AS live_expiry,
                       (array_agg(p.payment_seq ORDER BY p.purchase_time DESC, p.payment_seq DESC))[1] AS latest_seq
                  FROM points pt
                  JOIN %1$I.payments p
                    ON p.store_code = pt.store_code AND p.lineage_id = pt.lineage_id AND p.purchase_time <= pt.at
                 CROSS JOIN LATERAL (
                       SELECT ledger.refunded_at_instant(p.refunded_at, p.reversed_refund_at, p.refund_reversed_at, pt.at) AS refunded,
                              ledger.expiry_at_instant(p.expiry_time, p.extended_expiry_time, p.extended_at, pt.at) AS expiry) x
                 GROUP BY pt.store_code, pt.lineage_id, pt.at
            ), billing AS (
                SELECT DISTINCT ON (pt.store_code, pt.lineage_id, pt.at)
                       pt.store_code, pt.lineage_id, pt.at, b.state, b.changed_at, b.grace_expires_at
                  FROM points pt
                  JOIN %1$I.billing_states b
                    ON b.store_code = pt.store_code AND b.original_transaction_id = pt.lineage_id AND b.changed_at <= pt.at
                 ORDER BY pt.store_code, pt.lineage_id, pt.at, b.changed_at DESC, b.position DESC
            ), renewing AS (
                SELECT DISTINCT ON (pt.store_code, pt.lineage_id, pt.at)
                       pt.store_code, pt.lineage_id, pt.at, a.auto_renewing, a.changed_at
                  FROM points pt
                  JOIN %1$I.auto_renew_changes a
                    ON a.store_code = pt.store_code AND a.original_transaction_id = pt.lineage_id AND a.changed_at <= pt.at
                 ORDER BY pt.store_code, pt.lineage_id, pt.at, a.changed_at DESC, a.position DESC
            )
            SELECT d.store_code, d.lineage_id, d.at, d.first_purchase, coalesce(d.live_seq, d.latest_seq),
                   d.live_expiry, d.revoked_until,
                   r.auto_renewing IS NULL OR r.auto_renewing OR r.changed_at < d.last_purchase,
                   s.state,
                   CASE WHEN s.state = 'inGracePeriod' THEN s.grace_expires_at END
              FROM paid d
              LEFT JOIN renewing r ON r.store_code = d.store_code AND r.lineage_id = d.lineage_id AND r.at = d.at
              -- A billing state holds from its time until a renewal paid after it.
              LEFT JOIN billing s
                ON s.store_code = d.store_code AND s.lineage_id = d.lineage_id AND s.at = d.at
               AND s.state <> 'none' AND NOT coalesce(d.last_renewal > s.changed_at, false);
        END
        $body$;
        REVOKE ALL ON FUNCTION %1$I.refresh_states(text[], text[], timestamptz[]) FROM PUBLIC;
    $ddl$, target);
END
$install$;
REVOKE ALL ON FUNCTION ledger.install_lineage_states(text) FROM PUBLIC;
