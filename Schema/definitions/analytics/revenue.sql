-- Revenue: payments by purchase time, refunds by refund time.
CREATE OR REPLACE FUNCTION analytics.revenue(p_from date, p_to date, p_by text DEFAULT 'day',
                                  p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (period date, store_code text, product_id text, currency text, payments bigint,
               gross numeric, refunds numeric, net numeric)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT date_trunc(analytics.period_unit(p_by), m.at AT TIME ZONE 'UTC')::date,
       m.store_code, m.product_id, m.currency,
       count(*) FILTER (WHERE m.is_payment),
       coalesce(sum(m.price) FILTER (WHERE m.is_payment), 0),
       coalesce(sum(m.price) FILTER (WHERE NOT m.is_payment), 0),
       coalesce(sum(m.price) FILTER (WHERE m.is_payment), 0) - coalesce(sum(m.price) FILTER (WHERE NOT m.is_payment), 0)
  FROM (SELECT p.store_code, p.product_id, p.currency, p.price, p.purchase_time AS at, true AS is_payment
          FROM ledger.payments p
         WHERE p.purchase_time >= (p_from::timestamp AT TIME ZONE 'UTC')
           AND p.purchase_time < (p_to::timestamp AT TIME ZONE 'UTC')
           AND (p_include_sandbox OR NOT p.sandbox_payment)
        UNION ALL
        SELECT p.store_code, p.product_id, p.currency, p.price, p.refunded_at, false
          FROM ledger.payments p
         WHERE p.refunded_at >= (p_from::timestamp AT TIME ZONE 'UTC')
           AND p.refunded_at < (p_to::timestamp AT TIME ZONE 'UTC')
           AND (p_include_sandbox OR NOT p.sandbox_payment)) m
 GROUP BY 1, 2, 3, 4
$$;
COMMENT ON FUNCTION analytics.revenue(date, date, text, boolean) IS 'Revenue per period, store, product and currency over [p_from, p_to): payments and gross by purchase time, refunds (prices of payments refunded) by refund time, net = gross - refunds. Only rows with a payment or a refund.';
GRANT EXECUTE ON FUNCTION analytics.revenue(date, date, text, boolean) TO ledger_reader;
