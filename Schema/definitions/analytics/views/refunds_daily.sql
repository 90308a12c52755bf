CREATE OR REPLACE VIEW analytics.refunds_daily AS
SELECT d.day, r.store_code, r.product_id, r.currency, r.refunds, r.amount,
       r.refunds_after_consume, r.amount_after_consume
  FROM (SELECT g::date AS day
          FROM generate_series((SELECT date_trunc('day', min(refunded_at) AT TIME ZONE 'UTC') FROM ledger.payments),
                               (SELECT max(refunded_at) AT TIME ZONE 'UTC' FROM ledger.payments),
                               interval '1 day') g) d
 CROSS JOIN LATERAL analytics.refunds(d.day, d.day + 1, 'day', false) r;
COMMENT ON VIEW analytics.refunds_daily IS 'Refunds per UTC day (refund time), store, product and currency; sandbox left out. Refunds of payments already consumed (goods handed out, then the money taken back) are counted apart: a fraud signal.';
COMMENT ON COLUMN analytics.refunds_daily.day IS 'The UTC day of the refund.';
COMMENT ON COLUMN analytics.refunds_daily.store_code IS 'AS (App Store) or GG (Google Play).';
COMMENT ON COLUMN analytics.refunds_daily.product_id IS 'The store''s product ID.';
COMMENT ON COLUMN analytics.refunds_daily.currency IS 'ISO 4217 code; amounts are never converted.';
COMMENT ON COLUMN analytics.refunds_daily.refunds IS 'Payments refunded that day.';
COMMENT ON COLUMN analytics.refunds_daily.amount IS 'Sum of their prices.';
COMMENT ON COLUMN analytics.refunds_daily.refunds_after_consume IS 'Of those, payments consumed at or before the refund.';
COMMENT ON COLUMN analytics.refunds_daily.amount_after_consume IS 'Sum of the prices of the refunds after consume.';
GRANT SELECT ON analytics.refunds_daily TO ledger_reader;
