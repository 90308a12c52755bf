-- Starts, renewals and churn. A lineage churns at x when its entitled time ends at x (nothing
-- covers x), counted in the period holding x once x has passed (x <= now()): revoked when a
-- refund ended it; involuntary when a grace period ran out into billing retry, whatever the
-- auto-renew setting (the store could not charge; the user did not cancel); voluntary when
-- auto-renew was off at x (a cancel at or before x and not before the lineage's latest payment
-- by x: the autoRenewing rule of §3.2); involuntary otherwise. started: lineages whose first
-- payment (by purchase time) falls in the period; renewed: their later payments (also those
-- after a gap). A lineage's rows are found by its owner too, which a distributed ledger needs
-- (each lineage is one owner's, so the answer is the same).
CREATE OR REPLACE FUNCTION analytics.churn(p_from date, p_to date, p_by text DEFAULT 'day',
                                           p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (period date, store_code text, product_id text, started bigint, renewed bigint,
               churned bigint, churned_voluntary bigint, churned_involuntary bigint, revoked bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
WITH purchases AS (
    SELECT p.store_code, p.product_id, p.purchase_time AS at,
           CASE WHEN EXISTS (SELECT FROM ledger.payments q
                              WHERE q.user_id = p.user_id
                                AND q.store_code = p.store_code AND q.lineage_id = p.lineage_id
                                AND (p_include_sandbox OR NOT q.sandbox_payment)
                                AND (q.purchase_time, q.payment_seq) < (p.purchase_time, p.payment_seq))
                THEN 'renewed' ELSE 'started' END AS kind
      FROM ledger.payments p
     WHERE p.lineage_id IS NOT NULL
       AND p.purchase_time >= (p_from::timestamp AT TIME ZONE 'UTC')
       AND p.purchase_time < (p_to::timestamp AT TIME ZONE 'UTC')
       AND (p_include_sandbox OR NOT p.sandbox_payment)
), endings AS (
    -- The intervals of analytics.access that end in the window, read from the spans with its
    -- rules, so that each names its owner.
    SELECT s.store_code, s.product_id, s.ends_so_far AS at,
           CASE analytics.access_end(s.natural_end_so_far, s.billing_end_so_far, s.ends_so_far)
                WHEN 'refund' THEN 'revoked'
                WHEN 'billing' THEN 'involuntary'
                ELSE CASE WHEN EXISTS (
                    SELECT FROM ledger.auto_renew_changes c
                     WHERE c.user_id = s.user_id
                       AND c.store_code = s.store_code AND c.original_transaction_id = s.lineage_id
                       AND NOT c.auto_renewing AND c.changed_at <= s.ends_so_far
                       AND c.changed_at >= (SELECT max(q.purchase_time) FROM ledger.payments q
                                             WHERE q.user_id = s.user_id
                                               AND q.store_code = s.store_code AND q.lineage_id = s.lineage_id
                                               AND (p_include_sandbox OR NOT q.sandbox_payment)
                                               AND q.purchase_time <= s.ends_so_far))
                     THEN 'voluntary'
                     ELSE 'involuntary' END END AS kind
      FROM ledger.entitled_spans s
     WHERE s.with_sandbox = p_include_sandbox
       AND analytics.access_window(s.starts_at, s.ends_so_far, s.next_start,
                                   p_from::timestamp AT TIME ZONE 'UTC', p_to::timestamp AT TIME ZONE 'UTC')
       AND s.ends_so_far >= (p_from::timestamp AT TIME ZONE 'UTC')
       AND s.ends_so_far < (p_to::timestamp AT TIME ZONE 'UTC')
       AND s.ends_so_far <= now()
)
SELECT date_trunc(analytics.period_unit(p_by), x.at AT TIME ZONE 'UTC')::date,
       x.store_code, x.product_id,
       count(*) FILTER (WHERE x.kind = 'started'),
       count(*) FILTER (WHERE x.kind = 'renewed'),
       count(*) FILTER (WHERE x.kind IN ('voluntary', 'involuntary', 'revoked')),
       count(*) FILTER (WHERE x.kind = 'voluntary'),
       count(*) FILTER (WHERE x.kind = 'involuntary'),
       count(*) FILTER (WHERE x.kind = 'revoked')
  FROM (SELECT * FROM purchases UNION ALL SELECT * FROM endings) x
 GROUP BY 1, 2, 3
$$;
COMMENT ON FUNCTION analytics.churn(date, date, text, boolean) IS 'Per period, store and product: lineages started (first payment), renewals (later payments, by purchase time), and churn: entitled time that ended in the period (and has passed) with nothing covering its end, split into voluntary (auto-renew was off), involuntary (auto-renew on, or a grace period ended in billing retry) and revoked (a refund ended it).';
GRANT EXECUTE ON FUNCTION analytics.churn(date, date, text, boolean) TO ledger_reader;
