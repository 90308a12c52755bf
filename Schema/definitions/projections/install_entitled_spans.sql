-- Makes <target>.refresh_spans(stores, lineages, owner): the entitled spans of these lineages,
-- computed again from <target>'s projection tables. The rules of a span:
--
-- A payment p is active at t when purchase_time <= t, t is before its expiry at t
-- (ledger.expiry_at_instant: expiry_time, or extended_expiry_time from extended_at
-- on), and it is not refunded at t (ledger.refunded_at_instant: from refunded_at on,
-- and over [reversed_refund_at, refund_reversed_at)). As sets of t, that is
--     ([purchase_time, least(expiry_time, extended_at)) ∪ [max(purchase_time, extended_at), extended_expiry_time))
--     minus [refunded_at, ∞) minus [reversed_refund_at, refund_reversed_at)
-- so each expiry piece gives at most two spans: the one before the reversed refund
-- and the one after its reversal, each cut by a standing refund; cause says what
-- ends a span: 'expiry' (its natural end) or 'refund'.
-- A billing state b of 'inGracePeriod' holds at t when it is the lineage's latest
-- state by t ((changed_at, position) order), no renewal was purchased after it by t,
-- and t is before grace_expires_at (when known), once the lineage has a payment by t:
--     [max(changed_at, first purchase), least(grace_expires_at, next state's changed_at,
--                                             first renewal purchased after changed_at))
-- with cause 'billing'. Without sandbox, sandbox payments give no span, and a grace
-- period counts only in a lineage with a payment that is not sandbox.
-- In ledger.subscriptions_at an active payment outranks a billing state, and either
-- makes the lineage entitled: the union of both kinds of span is the entitled time.
-- Merged in (starts_at, ends_at) order: a span opens an interval when it starts after
-- every earlier span of its lineage ended.
--
-- Every statement is set-based, joins included: a rebuild's replay loads without the secondary
-- indexes, where a lookup per billing state (the next state, the lineage's payments) would scan
-- every payment for each one.
CREATE OR REPLACE FUNCTION ledger.install_entitled_spans(target text)
RETURNS void
LANGUAGE plpgsql
-- The caller's search_path comes back at exit (the body sets the target's).
SET search_path = pg_catalog, pg_temp
AS $install$
BEGIN
    -- Static SQL, the same text in every schema: created in the target, whose projection
    -- tables the unqualified names are (SET search_path FROM CURRENT; install_project_range.sql).
    PERFORM set_config('search_path', format('%I, pg_catalog, pg_temp', target), true);
    -- Generic plans, no sequential scans, no JIT: as project_range (install_project_range.sql).
    -- span_owners: the owners of these lineages, all of one shard (ledger.settle_spans groups
    -- them so), or null. On a Citus cluster every table is read by those owners as well (the
    -- filters `(span_owners IS NULL OR x.user_id = ANY (span_owners))`, which under a custom plan
    -- name the one shard, so that Citus sends each statement there whole); on one server the
    -- filters are left out below, and the statements are what they were before the cluster.
    -- A database made before the owners were named may hold refresh_spans(text[], text[]), and
    -- one made before a shard's owners were, refresh_spans(text[], text[], text): dropped here.
    DROP FUNCTION IF EXISTS refresh_spans(text[], text[]);
    DROP FUNCTION IF EXISTS refresh_spans(text[], text[], text);
    CREATE OR REPLACE FUNCTION refresh_spans(span_stores text[], span_lineages text[], span_owners text[])
    RETURNS void
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
    SET plan_cache_mode = force_generic_plan
    SET jit = off
    SET enable_seqscan = off
    AS $body$
    BEGIN
        DELETE FROM entitled_spans s
         USING unnest(span_stores, span_lineages) t(store_code, lineage_id)
         WHERE s.store_code = t.store_code AND s.lineage_id = t.lineage_id
           AND (span_owners IS NULL OR s.user_id = ANY (span_owners));

        INSERT INTO entitled_spans (store_code, lineage_id, with_sandbox, n, product_id, starts_at, ends_at,
                                         interval_start, ends_so_far, natural_end_so_far, billing_end_so_far,
                                         next_start, user_id)
        SELECT o.store_code, o.lineage_id, o.with_sandbox, row_number() OVER w, o.product_id, o.starts_at, o.ends_at,
               max(CASE WHEN o.opens THEN o.starts_at END) OVER w,
               max(o.ends_at) OVER w,
               max(o.ends_at) FILTER (WHERE o.cause = 'expiry') OVER w,
               max(o.ends_at) FILTER (WHERE o.cause = 'billing') OVER w,
               CASE WHEN NOT coalesce(lead(o.opens) OVER w, true) THEN lead(o.starts_at) OVER w END,
               o.user_id
          FROM (SELECT s.*,
                       coalesce(s.starts_at > max(s.ends_at) OVER (PARTITION BY s.store_code, s.lineage_id, s.with_sandbox
                                                                 ORDER BY s.starts_at, s.ends_at, s.product_id, s.cause
                                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                                true) AS opens
                  FROM (SELECT p.store_code, p.lineage_id, v.with_sandbox, p.product_id, s.starts_at, s.ends_at,
                               CASE WHEN s.ends_at < e.ends_at THEN 'refund' ELSE 'expiry' END AS cause,
                               p.user_id
                          FROM unnest(span_stores, span_lineages) t(store_code, lineage_id)
                          JOIN payments p ON p.store_code = t.store_code AND p.lineage_id = t.lineage_id
                                         AND (span_owners IS NULL OR p.user_id = ANY (span_owners))
                         CROSS JOIN (VALUES (false), (true)) v(with_sandbox)
                         CROSS JOIN LATERAL (
                               SELECT p.purchase_time, least(p.expiry_time, p.extended_at)
                               UNION ALL
                               SELECT greatest(p.purchase_time, p.extended_at), p.extended_expiry_time
                                WHERE p.extended_at IS NOT NULL
                               ) e(starts_at, ends_at)
                         CROSS JOIN LATERAL (
                               SELECT e.starts_at, least(e.ends_at, p.refunded_at, p.reversed_refund_at)
                               UNION ALL
                               SELECT greatest(e.starts_at, p.refund_reversed_at), least(e.ends_at, p.refunded_at)
                                WHERE p.reversed_refund_at IS NOT NULL
                               ) s(starts_at, ends_at)
                         WHERE (v.with_sandbox OR NOT p.sandbox_payment)
                           AND s.ends_at > s.starts_at
                        UNION ALL
                        -- Set-based, without a lookup per billing state: a replay loads
                        -- without indexes, where each lookup would scan every payment.
                        SELECT g.store_code, g.original_transaction_id, v.with_sandbox, l.product_id,
                               greatest(g.changed_at, q.first_purchase),
                               coalesce(least(g.grace_expires_at, g.next_changed_at, q.first_renewal), 'infinity'),
                               'billing', l.user_id
                          FROM (SELECT b.*, lead(b.changed_at) OVER (PARTITION BY b.store_code, b.original_transaction_id
                                                                     ORDER BY b.changed_at, b.position) AS next_changed_at
                                  FROM unnest(span_stores, span_lineages) t(store_code, lineage_id)
                                  JOIN billing_states b
                                    ON b.store_code = t.store_code AND b.original_transaction_id = t.lineage_id
                                   AND (span_owners IS NULL OR b.user_id = ANY (span_owners))) g
                          JOIN lineages l
                            ON l.store_code = g.store_code AND l.original_transaction_id = g.original_transaction_id
                           AND (span_owners IS NULL OR l.user_id = ANY (span_owners))
                          JOIN (SELECT b.store_code, b.original_transaction_id, b.position,
                                       min(r.purchase_time) AS first_purchase,
                                       min(r.purchase_time) FILTER (WHERE r.transaction_id <> r.lineage_id
                                                                      AND r.purchase_time > b.changed_at) AS first_renewal,
                                       bool_or(NOT r.sandbox_payment) AS live
                                  FROM unnest(span_stores, span_lineages) t(store_code, lineage_id)
                                  JOIN billing_states b
                                    ON b.store_code = t.store_code AND b.original_transaction_id = t.lineage_id
                                   AND (span_owners IS NULL OR b.user_id = ANY (span_owners))
                                  JOIN payments r
                                    ON r.store_code = b.store_code AND r.lineage_id = b.original_transaction_id
                                   AND (span_owners IS NULL OR r.user_id = ANY (span_owners))
                                 WHERE b.state = 'inGracePeriod'
                                 GROUP BY b.store_code, b.original_transaction_id, b.position) q
                            ON q.store_code = g.store_code AND q.original_transaction_id = g.original_transaction_id
                           AND q.position = g.position
                         CROSS JOIN (VALUES (false), (true)) v(with_sandbox)
                         WHERE g.state = 'inGracePeriod'
                           AND (v.with_sandbox OR q.live)
                           AND coalesce(least(g.grace_expires_at, g.next_changed_at, q.first_renewal), 'infinity')
                               > greatest(g.changed_at, q.first_purchase)) s) o
        WINDOW w AS (PARTITION BY o.store_code, o.lineage_id, o.with_sandbox
                     ORDER BY o.starts_at, o.ends_at, o.product_id, o.cause ROWS UNBOUNDED PRECEDING);
    END
    $body$;
    REVOKE ALL ON FUNCTION refresh_spans(text[], text[], text[]) FROM PUBLIC;
    IF NOT ledger.distributed_log() THEN
        PERFORM ledger.drop_owner_filters('refresh_spans(text[], text[], text[])'::regprocedure, 'span_owners');
    ELSE
        -- On a cluster, the statements on the owners' shard tables where this node holds them.
        PERFORM ledger.install_shard_path('refresh_spans(text[], text[], text[])'::regprocedure, 'span_owners',
                                          ARRAY['entitled_spans', 'payments', 'billing_states', 'lineages']);
    END IF;
END
$install$;
REVOKE ALL ON FUNCTION ledger.install_entitled_spans(text) FROM PUBLIC;

