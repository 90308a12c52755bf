-- Analytics: documented views in schema `analytics` for people and BI tools, and the
-- functions behind them, which `ledger analytics ...` calls with its date range and period.
--
-- Everything here reads the projections in schema `ledger` (never the event log), through SQL
-- functions whose bodies are strings: they resolve table names when they run, so `ledger
-- rebuild` can swap the projection tables under them. The views are plain views.
--
-- Conventions: periods are UTC calendar periods; p_from is inclusive, p_to exclusive; a
-- period is labelled by its first day; a period that --from or --to cuts is cut to the range
-- (its label stays the calendar period's first day). Sandbox payments are left out unless
-- p_include_sandbox. Money is summed per currency, as exact numeric, never converted.

CREATE SCHEMA IF NOT EXISTS analytics;
COMMENT ON SCHEMA analytics IS 'PurchaseLedger analytics: documented, stable views (and the functions behind them) over the projections in schema ledger. UTC days; sandbox payments left out; money per currency, never converted.';

-- The period unit, checked: day, week, month or year.
CREATE FUNCTION analytics.period_unit(p_by text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF p_by IS NULL OR p_by NOT IN ('day', 'week', 'month', 'year') THEN
        RAISE EXCEPTION 'analytics: the period must be day, week, month or year, not %', coalesce(p_by, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN p_by;
END
$$;
COMMENT ON FUNCTION analytics.period_unit(text) IS 'Returns its argument when it is day, week, month or year; raises invalid_parameter_value otherwise.';

-- The periods of a report: one row per UTC calendar period that meets [p_from, p_to).
CREATE FUNCTION analytics.periods(p_from date, p_to date, p_by text DEFAULT 'day')
RETURNS TABLE (period date, starts_at timestamptz, ends_at timestamptz)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE ROWS 31 AS $$
DECLARE
    step interval := ('1 ' || analytics.period_unit(p_by))::interval;
BEGIN
    RETURN QUERY
    SELECT g::date,
           greatest(g, p_from::timestamp) AT TIME ZONE 'UTC',
           least(g + step, p_to::timestamp) AT TIME ZONE 'UTC'
      FROM generate_series(date_trunc(p_by, p_from::timestamp), p_to::timestamp - interval '1 day', step) g;
END
$$;
COMMENT ON FUNCTION analytics.periods(date, date, text) IS 'The periods of a report over [p_from, p_to) by day, week, month or year (UTC): period (first day of the calendar period), starts_at and ends_at (exclusive), both cut to the range.';

-- Revenue: payments by purchase time, refunds by refund time.
CREATE FUNCTION analytics.revenue(p_from date, p_to date, p_by text DEFAULT 'day',
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

-- Access: a lineage is active at t when one of its payments has purchase_time <= t <
-- expiry_time and was not refunded by t (CONTRACT.md §3.2, as ledger.subscriptions_at has it).
-- So each payment gives access over [purchase_time, least(expiry_time, refunded_at)), and a
-- lineage's access is the union of those spans. analytics.access merges them into disjoint
-- intervals (gaps and islands), reading only the payments that meet [p_lo, p_hi]: the interval
-- ends that fall in [p_lo, p_hi) and the starts in (p_lo, p_hi] are exact, which is all the
-- reports below need. The range test is written twice: plain comparisons, and an overlap of
-- closed ranges that a GiST index on tstzrange(purchase_time, expiry_time, '[]') can serve.
CREATE FUNCTION analytics.access(p_lo timestamptz, p_hi timestamptz, p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (store_code text, product_id text, original_transaction_id text, starts_at timestamptz,
               ends_at timestamptz, ended_by_refund boolean)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
-- One sort of the spans by lineage (bytewise: the order of lineages does not matter) and start;
-- then, row by row: a span opens an interval when it
-- starts after every earlier span of its lineage ended; an interval closes at the span before
-- the next opening (or the lineage's last). A refund ended the interval when no span ends
-- naturally (at its expiry) at the interval's end.
SELECT c.store_code, c.product_id, c.lineage_id, c.interval_start, c.interval_end,
       c.natural_end IS DISTINCT FROM c.interval_end
  FROM (SELECT o.store_code, o.product_id, o.lineage_id,
               max(CASE WHEN o.opens THEN o.starts_at END) OVER w AS interval_start,
               max(o.ends_at) OVER w AS interval_end,
               max(o.ends_at) FILTER (WHERE NOT o.by_refund) OVER w AS natural_end,
               coalesce(lead(o.opens) OVER w, true) AS closes
          FROM (SELECT s.*,
                       coalesce(s.starts_at > max(s.ends_at) OVER (PARTITION BY s.store_code COLLATE "C", s.lineage_id COLLATE "C"
                                                                 ORDER BY s.starts_at, s.ends_at
                                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                                true) AS opens
                  FROM (SELECT p.store_code, p.product_id, p.lineage_id, p.purchase_time AS starts_at,
                               least(p.expiry_time, p.refunded_at) AS ends_at,
                               coalesce(p.refunded_at < p.expiry_time, false) AS by_refund
                          FROM ledger.payments p
                         WHERE p.lineage_id IS NOT NULL
                           AND tstzrange(p.purchase_time, p.expiry_time, '[]') && tstzrange(p_lo, p_hi, '[]')
                           AND p.purchase_time <= p_hi AND p.expiry_time >= p_lo
                           AND (p.refunded_at IS NULL OR p.refunded_at >= p_lo)
                           AND (p_include_sandbox OR NOT p.sandbox_payment)) s
                 WHERE s.ends_at > s.starts_at) o
        WINDOW w AS (PARTITION BY o.store_code COLLATE "C", o.lineage_id COLLATE "C" ORDER BY o.starts_at, o.ends_at
                     ROWS UNBOUNDED PRECEDING)) c
 WHERE c.closes
$$;
COMMENT ON FUNCTION analytics.access(timestamptz, timestamptz, boolean) IS 'Each lineage''s access as disjoint intervals [starts_at, ends_at): the union of its payments'' [purchase_time, least(expiry_time, refunded_at)), from the payments that meet [p_lo, p_hi] (ends in [p_lo, p_hi) and starts in (p_lo, p_hi] are exact). ended_by_refund: a refund, not an expiry, ended the interval.';

-- Active subscriptions at each period's exclusive end t: the access intervals [s, e) with
-- s <= t < e. Counted as a sweep, so the cost grows with the intervals, not intervals × periods:
-- each interval adds 1 from the first period whose end is at or after s (the period holding the
-- instant just before s) and takes it back from the first period whose end is at or after e.
CREATE FUNCTION analytics.subscribers(p_from date, p_to date, p_by text DEFAULT 'day',
                                      p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (period date, store_code text, product_id text, active bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
WITH periods AS (
    SELECT e.period FROM analytics.periods(p_from, p_to, p_by) e
), steps AS (
    SELECT a.store_code, a.product_id, d.period, sum(d.step) AS step
      FROM analytics.access(p_from::timestamp AT TIME ZONE 'UTC', p_to::timestamp AT TIME ZONE 'UTC', p_include_sandbox) a
     CROSS JOIN LATERAL (VALUES
           (greatest(date_trunc(p_by, (a.starts_at - interval '1 microsecond') AT TIME ZONE 'UTC'),
                     date_trunc(p_by, p_from::timestamp))::date, 1),
           (CASE WHEN a.ends_at <= (p_to::timestamp AT TIME ZONE 'UTC')
                 THEN greatest(date_trunc(p_by, (a.ends_at - interval '1 microsecond') AT TIME ZONE 'UTC'),
                               date_trunc(p_by, p_from::timestamp))::date END, -1)) d(period, step)
     WHERE d.period IS NOT NULL
     GROUP BY 1, 2, 3
), counts AS (
    SELECT p.period, g.store_code, g.product_id,
           sum(coalesce(s.step, 0)) OVER (PARTITION BY g.store_code, g.product_id ORDER BY p.period) AS active
      FROM periods p
     CROSS JOIN (SELECT DISTINCT store_code, product_id FROM steps) g
      LEFT JOIN steps s ON s.period = p.period AND s.store_code = g.store_code AND s.product_id = g.product_id
)
SELECT c.period, c.store_code, c.product_id, c.active::bigint FROM counts c WHERE c.active > 0
$$;
COMMENT ON FUNCTION analytics.subscribers(date, date, text, boolean) IS 'Subscription lineages active (CONTRACT.md §3.2) at each period''s exclusive end, per period, store and product. Only rows with at least one active lineage.';

-- Starts, renewals and churn. A lineage churns at x when an access interval ends at x (no
-- payment covers x), counted in the period holding x once x has passed (x <= now()): revoked
-- when a refund ended it, voluntary when auto-renew was off at x (a cancel at or before x and
-- not before the lineage's latest payment by x: the autoRenewing rule of §3.2), involuntary
-- otherwise. started: lineages whose first payment (by purchase time) falls in the period;
-- renewed: their later payments (also those after a gap).
CREATE FUNCTION analytics.churn(p_from date, p_to date, p_by text DEFAULT 'day',
                                p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (period date, store_code text, product_id text, started bigint, renewed bigint,
               churned bigint, churned_voluntary bigint, churned_involuntary bigint, revoked bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
WITH purchases AS (
    SELECT p.store_code, p.product_id, p.purchase_time AS at,
           CASE WHEN EXISTS (SELECT FROM ledger.payments q
                              WHERE q.store_code = p.store_code AND q.lineage_id = p.lineage_id
                                AND (p_include_sandbox OR NOT q.sandbox_payment)
                                AND (q.purchase_time, q.payment_seq) < (p.purchase_time, p.payment_seq))
                THEN 'renewed' ELSE 'started' END AS kind
      FROM ledger.payments p
     WHERE p.lineage_id IS NOT NULL
       AND p.purchase_time >= (p_from::timestamp AT TIME ZONE 'UTC')
       AND p.purchase_time < (p_to::timestamp AT TIME ZONE 'UTC')
       AND (p_include_sandbox OR NOT p.sandbox_payment)
), endings AS (
    SELECT a.store_code, a.product_id, a.ends_at AS at,
           CASE WHEN a.ended_by_refund THEN 'revoked'
                WHEN EXISTS (
                    SELECT FROM ledger.auto_renew_changes c
                     WHERE c.store_code = a.store_code AND c.original_transaction_id = a.original_transaction_id
                       AND NOT c.auto_renewing AND c.changed_at <= a.ends_at
                       AND c.changed_at >= (SELECT max(q.purchase_time) FROM ledger.payments q
                                             WHERE q.store_code = a.store_code AND q.lineage_id = a.original_transaction_id
                                               AND (p_include_sandbox OR NOT q.sandbox_payment)
                                               AND q.purchase_time <= a.ends_at))
                THEN 'voluntary'
                ELSE 'involuntary' END AS kind
      FROM analytics.access(p_from::timestamp AT TIME ZONE 'UTC', p_to::timestamp AT TIME ZONE 'UTC', p_include_sandbox) a
     WHERE a.ends_at >= (p_from::timestamp AT TIME ZONE 'UTC')
       AND a.ends_at < (p_to::timestamp AT TIME ZONE 'UTC')
       AND a.ends_at <= now()
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
COMMENT ON FUNCTION analytics.churn(date, date, text, boolean) IS 'Per period, store and product: lineages started (first payment), renewals (later payments, by purchase time), and churn: access that ended in the period (and has passed) with no payment covering its end, split into voluntary (auto-renew was off), involuntary (auto-renew on) and revoked (a refund ended it).';

-- Refunds by refund time; those of payments whose goods were already handed out apart.
CREATE FUNCTION analytics.refunds(p_from date, p_to date, p_by text DEFAULT 'day',
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

-- Goods paid for but not handed out, as the ledger stood at p_at.
CREATE FUNCTION analytics.backlog(p_at timestamptz DEFAULT now(), p_include_sandbox boolean DEFAULT false)
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

-- The views: UTC days over the whole ledger, sandbox left out. revenue_daily and refunds_daily
-- evaluate their function one day at a time, so a WHERE on day reads only those days through
-- the indexes. Counting active subscriptions costs as much as there are active ones on each
-- day, so active_subscriptions_daily and churn_daily make one set-based pass over the whole
-- history instead; for a date range, call analytics.subscribers or analytics.churn, which read
-- only the payments that meet the range.

CREATE VIEW analytics.revenue_daily AS
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

CREATE VIEW analytics.active_subscriptions_daily AS
SELECT s.period AS day, s.store_code, s.product_id, s.active
  FROM (SELECT (SELECT min(purchase_time) AT TIME ZONE 'UTC' FROM ledger.payments WHERE lineage_id IS NOT NULL)::date AS first_day,
               (SELECT max(expiry_time) AT TIME ZONE 'UTC' FROM ledger.payments WHERE lineage_id IS NOT NULL)::date + 1 AS after_last) b
 CROSS JOIN LATERAL analytics.subscribers(b.first_day, b.after_last, 'day', false) s;
COMMENT ON VIEW analytics.active_subscriptions_daily IS 'Subscription lineages active at the end of each UTC day (the first instant of the next day) by the rule of CONTRACT.md §3.2, per store and product; sandbox left out. Days with none active have no row. Not additive over days: for a month, take its last day. Computed over the whole history: for a date range, analytics.subscribers(from, to, ''day'') gives the same rows and reads only that range.';
COMMENT ON COLUMN analytics.active_subscriptions_daily.day IS 'The UTC day; counted at its end (next day 00:00:00 UTC).';
COMMENT ON COLUMN analytics.active_subscriptions_daily.store_code IS 'AS (App Store) or GG (Google Play).';
COMMENT ON COLUMN analytics.active_subscriptions_daily.product_id IS 'The subscription''s product ID.';
COMMENT ON COLUMN analytics.active_subscriptions_daily.active IS 'Lineages with a payment purchased at or before the instant, expiring after it, and not refunded by then.';

CREATE VIEW analytics.churn_daily AS
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
COMMENT ON COLUMN analytics.churn_daily.churned_involuntary IS 'Churned at natural expiry with auto-renew still on (billing failed or the store stopped renewing).';
COMMENT ON COLUMN analytics.churn_daily.revoked IS 'Access ended early by a refund (App Store refund or revocation, Google Play voided purchase).';

CREATE VIEW analytics.refunds_daily AS
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

CREATE VIEW analytics.unconsumed_backlog AS
SELECT b.store_code, b.product_id, b.unconsumed, b.oldest_purchase_time, b.median_age, b.p95_age
  FROM analytics.backlog(now(), false) b;
COMMENT ON VIEW analytics.unconsumed_backlog IS 'Goods paid for but not handed out, now: consumable payments (CONSUMABLE and CONSUMABLE_AUTO_RENEWABLE) neither consumed nor refunded, per store and product; sandbox left out. For another instant: analytics.backlog(at).';
COMMENT ON COLUMN analytics.unconsumed_backlog.store_code IS 'AS (App Store) or GG (Google Play).';
COMMENT ON COLUMN analytics.unconsumed_backlog.product_id IS 'The store''s product ID.';
COMMENT ON COLUMN analytics.unconsumed_backlog.unconsumed IS 'Payments waiting to be consumed.';
COMMENT ON COLUMN analytics.unconsumed_backlog.oldest_purchase_time IS 'Purchase time of the oldest of them.';
COMMENT ON COLUMN analytics.unconsumed_backlog.median_age IS 'Median of now - purchase_time (percentile_cont 0.5).';
COMMENT ON COLUMN analytics.unconsumed_backlog.p95_age IS '95th percentile of now - purchase_time (percentile_cont 0.95).';

GRANT USAGE ON SCHEMA analytics TO ledger_reader;
GRANT SELECT ON analytics.revenue_daily, analytics.active_subscriptions_daily, analytics.churn_daily,
                analytics.refunds_daily, analytics.unconsumed_backlog TO ledger_reader;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA analytics TO ledger_reader;
