CREATE OR REPLACE VIEW analytics.churn_daily AS
SELECT c.period AS day, c.store_code, c.product_id, c.started, c.renewed, c.churned,
       c.churned_voluntary, c.churned_involuntary, c.revoked
  FROM (SELECT (SELECT min(purchase_time) AT TIME ZONE 'UTC' FROM ledger.payments WHERE lineage_id IS NOT NULL)::date AS first_day,
               (SELECT max(greatest(purchase_time, expiry_time, refunded_at)) AT TIME ZONE 'UTC'
                  FROM ledger.payments WHERE lineage_id IS NOT NULL)::date + 1 AS after_last) b
 CROSS JOIN LATERAL analytics.churn(b.first_day, b.after_last, 'day', false) c;
COMMENT ON VIEW analytics.churn_daily IS 'Subscription starts, renewals and churn per UTC day, store and product; sandbox left out. A lineage churns when its access (its payments'' [purchase_time, expiry cut by refund)) ends with no payment covering the end; counted on that day once it has passed. Additive over days. Computed over the whole history: for a date range, analytics.churn(from, to, ''day'') gives the same rows and reads only that range.';
COMMENT ON COLUMN analytics.churn_daily.day IS 'The UTC day.';
COMMENT ON COLUMN analytics.churn_daily.store_code IS 'AS (App Store) or GG (Google Play).';
COMMENT ON COLUMN analytics.churn_daily.product_id IS 'The subscription''s product ID.';
COMMENT ON COLUMN analytics.churn_daily.started IS 'Lineages whose first payment (by purchase time) was purchased that day.';
COMMENT ON COLUMN analytics.churn_daily.renewed IS 'Later payments of a lineage (renewals, also after a gap) purchased that day.';
COMMENT ON COLUMN analytics.churn_daily.churned IS 'Lineages whose access ended that day without a payment extending it: churned_voluntary + churned_involuntary + revoked.';
COMMENT ON COLUMN analytics.churn_daily.churned_voluntary IS 'Churned at natural expiry with auto-renew off (the user cancelled).';
COMMENT ON COLUMN analytics.churn_daily.revoked IS 'Access ended early by a refund (App Store refund or revocation, Google Play voided purchase).';
COMMENT ON COLUMN analytics.churn_daily.churned_involuntary IS 'Churned with auto-renew still on (billing failed or the store stopped renewing), or at the end of a grace period (billing retry).';
GRANT SELECT ON analytics.churn_daily TO ledger_reader;
