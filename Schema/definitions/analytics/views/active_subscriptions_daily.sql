CREATE OR REPLACE VIEW analytics.active_subscriptions_daily AS
SELECT s.period AS day, s.store_code, s.product_id, s.active
  FROM (SELECT (SELECT min(purchase_time) AT TIME ZONE 'UTC' FROM ledger.payments WHERE lineage_id IS NOT NULL)::date AS first_day,
               (SELECT max(expiry_time) AT TIME ZONE 'UTC' FROM ledger.payments WHERE lineage_id IS NOT NULL)::date + 1 AS after_last) b
 CROSS JOIN LATERAL analytics.subscribers(b.first_day, b.after_last, 'day', false) s;
COMMENT ON COLUMN analytics.active_subscriptions_daily.day IS 'The UTC day; counted at its end (next day 00:00:00 UTC).';
COMMENT ON COLUMN analytics.active_subscriptions_daily.store_code IS 'AS (App Store) or GG (Google Play).';
COMMENT ON COLUMN analytics.active_subscriptions_daily.product_id IS 'The subscription''s product ID.';
COMMENT ON VIEW analytics.active_subscriptions_daily IS 'Subscription lineages entitled (docs/contract.md §3.2: active or inGracePeriod) at the end of each UTC day (the first instant of the next day), per store and product; sandbox left out. Days with none have no row. Not additive over days: for a month, take its last day. Computed over the whole history: for a date range, analytics.subscribers(from, to, ''day'') gives the same rows and reads only that range.';
COMMENT ON COLUMN analytics.active_subscriptions_daily.active IS 'Lineages entitled at the instant: a payment purchased at or before it, expiring after it (renewal extensions counted from their time) and not refunded then, or a grace period in force.';
GRANT SELECT ON analytics.active_subscriptions_daily TO ledger_reader;
