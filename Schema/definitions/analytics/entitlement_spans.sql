-- Analytics count what §3.2 calls entitled: a lineage is a subscriber at t when
-- ledger.subscriptions_at(t) says `entitled` (active or inGracePeriod). Renewal extensions,
-- reversed refunds and grace periods change access over time; this function states each as
-- spans of time, so that their union at t is exactly `entitled` at t, and analytics.access
-- merges the spans.
--
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
CREATE OR REPLACE FUNCTION analytics.entitlement_spans(p_lo timestamptz, p_hi timestamptz, p_include_sandbox boolean DEFAULT false)
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
GRANT EXECUTE ON FUNCTION analytics.entitlement_spans(timestamptz, timestamptz, boolean) TO ledger_reader;
