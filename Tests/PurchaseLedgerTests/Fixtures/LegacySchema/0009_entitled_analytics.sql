-- Analytics count what §3.2 calls entitled (issue #11): a lineage is a subscriber at t when
-- ledger.subscriptions_at(t) says `entitled` (active or inGracePeriod), and a grace period
-- that ends in billing retry is involuntary churn.
--
-- 0006 built each lineage's access from its payments' [purchase_time, least(expiry_time,
-- refunded_at)). Store notifications added three facts that change access over time, and a
-- fourth kind of access: a renewal extension (the expiry moves at extended_at), a refund
-- reversal (refunded over [reversed_refund_at, refund_reversed_at) only), and grace periods.
-- analytics.entitlement_spans states each as spans of time, so that their union at t is
-- exactly `entitled` at t; analytics.access merges the spans as before.

-- The spans of time in which each lineage is entitled, from the payments and billing states
-- that meet [p_lo, p_hi]. `cause` says what ends a span: 'expiry' (its natural end), 'refund'
-- (a refund cut it short), 'billing' (a grace period ended: billing retry, another billing
-- state, or a renewal).
--
-- A payment p is active at t when purchase_time <= t, t is before its expiry at t
-- (ledger.expiry_at_instant: expiry_time, or extended_expiry_time from extended_at on), and it
-- is not refunded at t (ledger.refunded_at_instant: from refunded_at on, and over
-- [reversed_refund_at, refund_reversed_at)). As sets of t, that is
--     ([purchase_time, least(expiry_time, extended_at)) ∪ [max(purchase_time, extended_at), extended_expiry_time))
--     minus [refunded_at, ∞) minus [reversed_refund_at, refund_reversed_at)
-- so each expiry piece gives at most two spans: the one before the reversed refund and the one
-- after its reversal, each cut by a standing refund.
--
-- A billing state b of 'inGracePeriod' holds at t when it is the lineage's latest state by t
-- ((changed_at, position) order), no renewal was purchased after it by t, and t is before
-- grace_expires_at (when known), once the lineage has a payment by t. As a span:
--     [max(changed_at, first purchase), least(grace_expires_at, next state's changed_at,
--                                             first renewal purchased after changed_at))
-- In ledger.subscriptions_at an active payment outranks a billing state, and either makes the
-- lineage entitled: the union of both kinds of span is the entitled time.
CREATE FUNCTION analytics.entitlement_spans(p_lo timestamptz, p_hi timestamptz, p_include_sandbox boolean DEFAULT false)
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
COMMENT ON FUNCTION analytics.entitlement_spans(timestamptz, timestamptz, boolean) IS 'The spans [starts_at, ends_at) in which a lineage is entitled (CONTRACT.md §3.2: active or inGracePeriod), one per payment piece or grace period that meets [p_lo, p_hi]; their union per lineage at t is ledger.subscriptions_at(t)''s entitled. cause: what ends the span (expiry, refund, billing).';

-- Access as 0006 had it, now over the entitlement spans: each lineage's entitled time as
-- disjoint intervals, with what ended each. An interval ends by expiry when a span ends
-- naturally at its end, else by billing (a grace period ended) when one of those does, else by
-- a refund. (The return type gains ended_by_billing, so the function is replaced whole; the
-- functions that call it are plain SQL bodies, which PostgreSQL resolves when they run.)
DROP FUNCTION analytics.access(timestamptz, timestamptz, boolean);
CREATE FUNCTION analytics.access(p_lo timestamptz, p_hi timestamptz, p_include_sandbox boolean DEFAULT false)
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
                  FROM analytics.entitlement_spans(p_lo, p_hi, p_include_sandbox) s) o
        WINDOW w AS (PARTITION BY o.store_code COLLATE "C", o.lineage_id COLLATE "C" ORDER BY o.starts_at, o.ends_at
                     ROWS UNBOUNDED PRECEDING)) c
 WHERE c.closes
$$;
COMMENT ON FUNCTION analytics.access(timestamptz, timestamptz, boolean) IS 'Each lineage''s entitled time (CONTRACT.md §3.2: active or inGracePeriod) as disjoint intervals [starts_at, ends_at): the union of analytics.entitlement_spans that meet [p_lo, p_hi] (ends in [p_lo, p_hi) and starts in (p_lo, p_hi] are exact). ended_by_refund: a refund, not an expiry or a billing state, ended the interval; ended_by_billing: a grace period ended it (billing retry or another billing state).';

-- Churn as 0006 had it, with a grace period that ends in billing retry counted involuntary
-- whatever the auto-renew setting (the store could not charge; the user did not cancel).
CREATE OR REPLACE FUNCTION analytics.churn(p_from date, p_to date, p_by text DEFAULT 'day',
                                           p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (period date, store_code text, product_id text, started bigint, renewed bigint,
               churned bigint, churned_voluntary bigint, churned_involuntary bigint, revoked bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
WITH purchases AS (
    SELECT p.store_code, p.product_id, p.purchase_time AS at,
           CASE WHEN EXISTS (SELECT FROM ledger.payments q
                              WHERE q.store_code = p.store_code AND q.lineage_id = p.lineage_id
                                AND (p_include_sandbox OR NOT q.sandbox_payment)
                                AND (q.purchase_time, q.payment_seq) < (p.purchase_time, p.payment_seq))
                THEN 'renewed' ELSE 'started' END AS kind
      FROM ledger.payments p
     WHERE p.lineage_id IS NOT NULL
       AND p.purchase_time >= (p_from::timestamp AT TIME ZONE 'UTC')
       AND p.purchase_time < (p_to::timestamp AT TIME ZONE 'UTC')
       AND (p_include_sandbox OR NOT p.sandbox_payment)
), endings AS (
    SELECT a.store_code, a.product_id, a.ends_at AS at,
           CASE WHEN a.ended_by_refund THEN 'revoked'
                WHEN a.ended_by_billing THEN 'involuntary'
                WHEN EXISTS (
                    SELECT FROM ledger.auto_renew_changes c
                     WHERE c.store_code = a.store_code AND c.original_transaction_id = a.original_transaction_id
                       AND NOT c.auto_renewing AND c.changed_at <= a.ends_at
                       AND c.changed_at >= (SELECT max(q.purchase_time) FROM ledger.payments q
                                             WHERE q.store_code = a.store_code AND q.lineage_id = a.original_transaction_id
                                               AND (p_include_sandbox OR NOT q.sandbox_payment)
                                               AND q.purchase_time <= a.ends_at))
                THEN 'voluntary'
                ELSE 'involuntary' END AS kind
      FROM analytics.access(p_from::timestamp AT TIME ZONE 'UTC', p_to::timestamp AT TIME ZONE 'UTC', p_include_sandbox) a
     WHERE a.ends_at >= (p_from::timestamp AT TIME ZONE 'UTC')
       AND a.ends_at < (p_to::timestamp AT TIME ZONE 'UTC')
       AND a.ends_at <= now()
)
SELECT date_trunc(analytics.period_unit(p_by), x.at AT TIME ZONE 'UTC')::date,
       x.store_code, x.product_id,
       count(*) FILTER (WHERE x.kind = 'started'),
       count(*) FILTER (WHERE x.kind = 'renewed'),
       count(*) FILTER (WHERE x.kind IN ('voluntary', 'involuntary', 'revoked')),
       count(*) FILTER (WHERE x.kind = 'voluntary'),
       count(*) FILTER (WHERE x.kind = 'involuntary'),
       count(*) FILTER (WHERE x.kind = 'revoked')
  FROM (SELECT * FROM purchases UNION ALL SELECT * FROM endings) x
 GROUP BY 1, 2, 3
$$;

COMMENT ON FUNCTION analytics.subscribers(date, date, text, boolean) IS 'Subscription lineages entitled (CONTRACT.md §3.2: active or inGracePeriod) at each period''s exclusive end, per period, store and product. Only rows with at least one. The column is named active for compatibility: it counts entitled lineages.';
COMMENT ON FUNCTION analytics.churn(date, date, text, boolean) IS 'Per period, store and product: lineages started (first payment), renewals (later payments, by purchase time), and churn: entitled time that ended in the period (and has passed) with nothing covering its end, split into voluntary (auto-renew was off), involuntary (auto-renew on, or a grace period ended in billing retry) and revoked (a refund ended it).';
COMMENT ON VIEW analytics.active_subscriptions_daily IS 'Subscription lineages entitled (CONTRACT.md §3.2: active or inGracePeriod) at the end of each UTC day (the first instant of the next day), per store and product; sandbox left out. Days with none have no row. Not additive over days: for a month, take its last day. Computed over the whole history: for a date range, analytics.subscribers(from, to, ''day'') gives the same rows and reads only that range.';
COMMENT ON COLUMN analytics.active_subscriptions_daily.active IS 'Lineages entitled at the instant: a payment purchased at or before it, expiring after it (renewal extensions counted from their time) and not refunded then, or a grace period in force.';
COMMENT ON COLUMN analytics.churn_daily.churned_involuntary IS 'Churned with auto-renew still on (billing failed or the store stopped renewing), or at the end of a grace period (billing retry).';

GRANT EXECUTE ON FUNCTION analytics.entitlement_spans(timestamptz, timestamptz, boolean),
                          analytics.access(timestamptz, timestamptz, boolean) TO ledger_reader;
