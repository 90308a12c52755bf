-- Entitled subscriptions at each period's exclusive end t: the access intervals [s, e) with
-- s <= t < e. Counted as a sweep, so the cost grows with the intervals, not intervals × periods:
-- each interval adds 1 from the first period whose end is at or after s (the period holding the
-- instant just before s) and takes it back from the first period whose end is at or after e.
-- The intervals are first counted by (store, product, first period, last period), in one pass
-- with no join, and the steps made from those counts: a step pair made for every interval (a
-- VALUES scan started again for each of them) would take half the report's time (BENCHMARKS.md,
-- "analytics subscribers: steps from counts").
CREATE OR REPLACE FUNCTION analytics.subscribers(p_from date, p_to date, p_by text DEFAULT 'day',
                                      p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (period date, store_code text, product_id text, active bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
WITH periods AS (
    SELECT e.period FROM analytics.periods(p_from, p_to, p_by) e
), bounds AS (
    SELECT a.store_code, a.product_id,
           greatest(date_trunc(p_by, (a.starts_at - interval '1 microsecond') AT TIME ZONE 'UTC'),
                    date_trunc(p_by, p_from::timestamp))::date AS first_period,
           CASE WHEN a.ends_at <= (p_to::timestamp AT TIME ZONE 'UTC')
                THEN greatest(date_trunc(p_by, (a.ends_at - interval '1 microsecond') AT TIME ZONE 'UTC'),
                              date_trunc(p_by, p_from::timestamp))::date END AS end_period,
           count(*) AS n
      FROM analytics.access(p_from::timestamp AT TIME ZONE 'UTC', p_to::timestamp AT TIME ZONE 'UTC', p_include_sandbox) a
     GROUP BY 1, 2, 3, 4
), steps AS (
    SELECT b.store_code, b.product_id, d.period, sum(d.step) AS step
      FROM bounds b
     CROSS JOIN LATERAL (VALUES (b.first_period, b.n), (b.end_period, -b.n)) d(period, step)
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
COMMENT ON FUNCTION analytics.subscribers(date, date, text, boolean) IS 'Subscription lineages entitled (docs/contract.md §3.2: active or inGracePeriod) at each period''s exclusive end, per period, store and product. Only rows with at least one. The column is named active for compatibility: it counts entitled lineages.';
GRANT EXECUTE ON FUNCTION analytics.subscribers(date, date, text, boolean) TO ledger_reader;
