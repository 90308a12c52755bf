-- Every subscription lineage with at least one payment made by p_at, as CONTRACT.md §3.2
-- evaluates it at p_at, billing states included. Filter it by user_id and store_code: the
-- filters reach the lineages index. (Its columns changed with the billing states: a database
-- that has the older function gets it dropped first, by the migrator's adoption.)
-- The status is worked out once per lineage, in a LATERAL the planner keeps apart (OFFSET 0):
-- written in the select list, each use of it (status, entitled, the grace expiry, a caller's
-- filter on entitled) was a copy of the CASE with its own subplan, and every execution started
-- them all (BENCHMARKS.md, "subscriptions --at: the executor's start").
CREATE OR REPLACE FUNCTION ledger.subscriptions_at(p_at timestamptz)
RETURNS TABLE (user_id text, store_code text, product_id text, product_type text,
               original_transaction_id text, latest_payment_seq text, purchase_time timestamptz,
               expiry_time timestamptz, auto_renewing boolean, status text, entitled boolean,
               grace_period_expiry_time timestamptz)
LANGUAGE sql STABLE AS $$
SELECT s.user_id, s.store_code, s.product_id, s.product_type, s.original_transaction_id,
       s.latest_payment_seq, s.purchase_time, s.expiry_time, s.auto_renewing, st.status,
       st.status IN ('active', 'inGracePeriod'),
       CASE WHEN st.status = 'inGracePeriod' THEN s.grace_expires_at END
  FROM (
    SELECT l.user_id, l.store_code, l.product_id, l.product_type, l.original_transaction_id,
           coalesce(agg.live_seq, agg.latest_seq) AS latest_payment_seq,
           agg.first_purchase AS purchase_time,
           agg.live_expiry AS expiry_time,
           (ar.auto_renewing IS NULL OR ar.auto_renewing OR ar.changed_at < agg.last_purchase) AS auto_renewing,
           agg.revoked, bs.state, bs.changed_at AS state_changed_at,
           bs.grace_expires_at
      FROM ledger.lineages l
      -- One index-only range scan of payments_lineage_idx per lineage: the purchase times, the live
      -- payment (the greatest expiry at p_at among those not refunded then, NULLs first as in
      -- ORDER BY … DESC, then the latest) and the latest payment, each an ordered pick.
      CROSS JOIN LATERAL (
            SELECT min(p.purchase_time) AS first_purchase,
                   max(p.purchase_time) AS last_purchase,
                   coalesce(bool_or(x.refunded AND x.expiry > p_at), false) AS revoked,
                   (array_agg(p.payment_seq ORDER BY x.expiry DESC, p.purchase_time DESC, p.payment_seq DESC)
                      FILTER (WHERE NOT x.refunded))[1] AS live_seq,
                   (array_agg(x.expiry ORDER BY x.expiry DESC, p.purchase_time DESC, p.payment_seq DESC)
                      FILTER (WHERE NOT x.refunded))[1] AS live_expiry,
                   (array_agg(p.payment_seq ORDER BY p.purchase_time DESC, p.payment_seq DESC))[1] AS latest_seq
              FROM ledger.payments p
             CROSS JOIN LATERAL (
                   SELECT ledger.refunded_at_instant(p.refunded_at, p.reversed_refund_at, p.refund_reversed_at, p_at) AS refunded,
                          ledger.expiry_at_instant(p.expiry_time, p.extended_expiry_time, p.extended_at, p_at) AS expiry) x
             WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
               AND p.purchase_time <= p_at) agg
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
 CROSS JOIN LATERAL (
       SELECT CASE WHEN s.expiry_time > p_at THEN 'active'
                   -- A billing state holds from its time until a renewal paid after it (looked
                   -- up only for a lineage that has a billing state).
                   WHEN s.state IS NOT NULL AND s.state <> 'none'
                        AND NOT EXISTS (SELECT FROM ledger.payments r
                                         WHERE r.store_code = s.store_code AND r.lineage_id = s.original_transaction_id
                                           AND r.purchase_time <= p_at AND r.purchase_time > s.state_changed_at
                                           AND r.transaction_id <> r.lineage_id) THEN
                        CASE WHEN s.state <> 'inGracePeriod' THEN s.state
                             WHEN s.grace_expires_at IS NULL OR s.grace_expires_at > p_at THEN 'inGracePeriod'
                             ELSE 'billingRetry' END
                   WHEN s.revoked THEN 'revoked'
                   ELSE 'expired' END AS status
        OFFSET 0) st
$$;
GRANT EXECUTE ON FUNCTION ledger.subscriptions_at(timestamptz) TO ledger_reader, ledger_writer;
