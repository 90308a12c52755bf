-- Refunds by refund time; those of payments whose goods were already handed out apart.
CREATE OR REPLACE FUNCTION analytics.refunds(p_from date, p_to date, p_by text DEFAULT 'day',
                                  p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (period date, store_code text, product_id text, currency text, refunds bigint,
               amount numeric, refunds_after_consume bigint, amount_after_consume numeric)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT date_trunc(analytics.period_unit(p_by), p.refunded_at AT TIME ZONE 'UTC')::date,
       p.store_code, p.product_id, p.currency,
       count(*), sum(p.price),
       count(*) FILTER (WHERE p.consumed_at <= p.refunded_at),
       coalesce(sum(p.price) FILTER (WHERE p.consumed_at <= p.refunded_at), 0)
  FROM ledger.payments p
 WHERE p.refunded_at >= (p_from::timestamp AT TIME ZONE 'UTC')
   AND p.refunded_at < (p_to::timestamp AT TIME ZONE 'UTC')
   AND (p_include_sandbox OR NOT p.sandbox_payment)
 GROUP BY 1, 2, 3, 4
$$;
COMMENT ON FUNCTION analytics.refunds(date, date, text, boolean) IS 'Refunds per period (by refund time), store, product and currency: count and sum of prices, and apart those of payments consumed at or before the refund (goods already handed out: the fraud signal).';
GRANT EXECUTE ON FUNCTION analytics.refunds(date, date, text, boolean) TO ledger_reader;
