CREATE OR REPLACE VIEW analytics.unconsumed_backlog AS
SELECT b.store_code, b.product_id, b.unconsumed, b.oldest_purchase_time, b.median_age, b.p95_age
  FROM analytics.backlog(now(), false) b;
COMMENT ON VIEW analytics.unconsumed_backlog IS 'Goods paid for but not handed out, now: consumable payments (CONSUMABLE and CONSUMABLE_AUTO_RENEWABLE) neither consumed nor refunded, per store and product; sandbox left out. For another instant: analytics.backlog(at).';
COMMENT ON COLUMN analytics.unconsumed_backlog.store_code IS 'AS (App Store) or GG (Google Play).';
COMMENT ON COLUMN analytics.unconsumed_backlog.product_id IS 'The store''s product ID.';
COMMENT ON COLUMN analytics.unconsumed_backlog.unconsumed IS 'Payments waiting to be consumed.';
COMMENT ON COLUMN analytics.unconsumed_backlog.oldest_purchase_time IS 'Purchase time of the oldest of them.';
COMMENT ON COLUMN analytics.unconsumed_backlog.median_age IS 'Median of now - purchase_time (percentile_cont 0.5).';
COMMENT ON COLUMN analytics.unconsumed_backlog.p95_age IS '95th percentile of now - purchase_time (percentile_cont 0.95).';
GRANT SELECT ON analytics.unconsumed_backlog TO ledger_reader;
