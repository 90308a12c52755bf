-- The views: UTC days over the whole ledger, sandbox left out. revenue_daily and refunds_daily
-- evaluate their function one day at a time, so a WHERE on day reads only those days through
-- the indexes. Counting active subscriptions costs as much as there are active ones on each
-- day, so active_subscriptions_daily and churn_daily make one set-based pass over the whole
-- history instead; for a date range, call analytics.subscribers or analytics.churn, which read
-- only the payments that meet the range.

CREATE OR REPLACE VIEW analytics.revenue_daily AS
SELECT d.day, r.store_code, r.product_id, r.currency, r.payments, r.gross, r.refunds, r.net
  FROM (SELECT g::date AS day
          FROM generate_series((SELECT date_trunc('day', min(purchase_time) AT TIME ZONE 'UTC') FROM ledger.payments),
                               (SELECT greatest(max(purchase_time), max(refunded_at)) AT TIME ZONE 'UTC' FROM ledger.payments),
                               interval '1 day') g) d
 CROSS JOIN LATERAL analytics.revenue(d.day, d.day + 1, 'day', false) r;
COMMENT ON VIEW analytics.revenue_daily IS 'Revenue per UTC day, store, product and currency, sandbox payments left out. A row for each day with a payment or a refund. Sum gross, refunds and net over days for longer periods, per currency.';
COMMENT ON COLUMN analytics.revenue_daily.day IS 'The UTC day.';
COMMENT ON COLUMN analytics.revenue_daily.store_code IS 'AS (App Store) or GG (Google Play).';
COMMENT ON COLUMN analytics.revenue_daily.product_id IS 'The store''s product ID.';
COMMENT ON COLUMN analytics.revenue_daily.currency IS 'ISO 4217 code; amounts are never converted between currencies.';
COMMENT ON COLUMN analytics.revenue_daily.payments IS 'Payments (first purchases and renewals) purchased that day.';
COMMENT ON COLUMN analytics.revenue_daily.gross IS 'Sum of the prices of the payments purchased that day.';
COMMENT ON COLUMN analytics.revenue_daily.refunds IS 'Sum of the prices of the payments refunded that day (by refund time, whenever they were purchased).';
COMMENT ON COLUMN analytics.revenue_daily.net IS 'gross - refunds; negative on a day with more refunded than sold.';
GRANT SELECT ON analytics.revenue_daily TO ledger_reader;
