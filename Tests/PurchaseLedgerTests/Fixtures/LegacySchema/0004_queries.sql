-- The read side shared by the queries and the analytics views.

-- Every subscription lineage with at least one payment made by p_at, as CONTRACT.md §3.2
-- evaluates it at p_at: the events whose own time is at or before p_at count. Filter it by
-- user_id and store_code: the filters reach the lineages index.
CREATE FUNCTION ledger.subscriptions_at(p_at timestamptz)
RETURNS TABLE (user_id text, store_code text, product_id text, product_type text,
               original_transaction_id text, latest_payment_seq text, purchase_time timestamptz,
               expiry_time timestamptz, auto_renewing boolean, status text)
LANGUAGE sql STABLE AS $$
SELECT l.user_id, l.store_code, l.product_id, l.product_type, l.original_transaction_id,
       coalesce(live.payment_seq, latest.payment_seq),
       agg.first_purchase,
       live.expiry_time,
       (cancel.changed_at IS NULL OR cancel.changed_at < agg.last_purchase),
       CASE WHEN live.expiry_time > p_at THEN 'active'
            WHEN agg.revoked THEN 'revoked'
            ELSE 'expired' END
  FROM ledger.lineages l
  CROSS JOIN LATERAL (
        SELECT min(p.purchase_time) AS first_purchase,
               max(p.purchase_time) AS last_purchase,
               coalesce(bool_or(p.refunded_at <= p_at AND p.expiry_time > p_at), false) AS revoked
          FROM ledger.payments p
         WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
           AND p.purchase_time <= p_at) agg
  LEFT JOIN LATERAL (
        SELECT p.payment_seq, p.expiry_time
          FROM ledger.payments p
         WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
           AND p.purchase_time <= p_at
           AND (p.refunded_at IS NULL OR p.refunded_at > p_at)
         ORDER BY p.expiry_time DESC, p.purchase_time DESC, p.payment_seq DESC
         LIMIT 1) live ON true
  LEFT JOIN LATERAL (
        SELECT p.payment_seq
          FROM ledger.payments p
         WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
           AND p.purchase_time <= p_at
         ORDER BY p.purchase_time DESC, p.payment_seq DESC
         LIMIT 1) latest ON true
  LEFT JOIN LATERAL (
        SELECT max(c.changed_at) AS changed_at
          FROM ledger.auto_renew_changes c
         WHERE c.store_code = l.store_code AND c.original_transaction_id = l.original_transaction_id
           AND c.changed_at <= p_at AND NOT c.auto_renewing) cancel ON true
 WHERE agg.first_purchase IS NOT NULL
$$;

GRANT EXECUTE ON FUNCTION ledger.subscriptions_at(timestamptz) TO ledger_reader, ledger_writer;
