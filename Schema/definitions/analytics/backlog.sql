-- Goods paid for but not handed out, as the ledger stood at p_at.
CREATE OR REPLACE FUNCTION analytics.backlog(p_at timestamptz DEFAULT now(), p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (store_code text, product_id text, unconsumed bigint, oldest_purchase_time timestamptz,
               median_age interval, p95_age interval)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT p.store_code, p.product_id, count(*), min(p.purchase_time),
       justify_hours(percentile_cont(0.5) WITHIN GROUP (ORDER BY p_at - p.purchase_time)),
       justify_hours(percentile_cont(0.95) WITHIN GROUP (ORDER BY p_at - p.purchase_time))
  FROM ledger.payments p
 WHERE p.product_type <> 'AUTO_RENEWABLE'
   AND p.purchase_time <= p_at
   AND (p.consumed_at IS NULL OR p.consumed_at > p_at)
   AND (p.refunded_at IS NULL OR p.refunded_at > p_at)
   AND (p_include_sandbox OR NOT p.sandbox_payment)
 GROUP BY 1, 2
$$;
COMMENT ON FUNCTION analytics.backlog(timestamptz, boolean) IS 'Consumable payments purchased by p_at and neither consumed nor refunded by then, per store and product: count, oldest purchase time, median and 95th-percentile age at p_at (percentile_cont).';
GRANT EXECUTE ON FUNCTION analytics.backlog(timestamptz, boolean) TO ledger_reader;
