-- Each lineage's entitled time as disjoint intervals, with what ended each (gaps and islands
-- over analytics.entitlement_spans): one sort of the spans by lineage and start; a span opens
-- an interval when it starts after every earlier span of its lineage ended; an interval closes
-- at the span before the next opening. An interval ends by expiry when a span ends naturally
-- at its end, else by billing when a grace period's span does, else by a refund. The intervals
-- that end in [p_lo, p_hi) and start in (p_lo, p_hi] are exact, which is all the reports need.
CREATE OR REPLACE FUNCTION analytics.access(p_lo timestamptz, p_hi timestamptz, p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (store_code text, product_id text, original_transaction_id text, starts_at timestamptz,
               ends_at timestamptz, ended_by_refund boolean, ended_by_billing boolean)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT c.store_code, c.product_id, c.lineage_id, c.interval_start, c.interval_end,
       c.natural_end IS DISTINCT FROM c.interval_end AND c.billing_end IS DISTINCT FROM c.interval_end,
       c.natural_end IS DISTINCT FROM c.interval_end AND c.billing_end = c.interval_end
  FROM (SELECT o.store_code, o.product_id, o.lineage_id,
               max(CASE WHEN o.opens THEN o.starts_at END) OVER w AS interval_start,
               max(o.ends_at) OVER w AS interval_end,
               max(o.ends_at) FILTER (WHERE o.cause = 'expiry') OVER w AS natural_end,
               max(o.ends_at) FILTER (WHERE o.cause = 'billing') OVER w AS billing_end,
               coalesce(lead(o.opens) OVER w, true) AS closes
          FROM (SELECT s.*,
                       coalesce(s.starts_at > max(s.ends_at) OVER (PARTITION BY s.store_code COLLATE "C", s.lineage_id COLLATE "C"
                                                                 ORDER BY s.starts_at, s.ends_at
                                                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                                true) AS opens
                  FROM analytics.entitlement_spans(p_lo, p_hi, p_include_sandbox) s) o
        WINDOW w AS (PARTITION BY o.store_code COLLATE "C", o.lineage_id COLLATE "C" ORDER BY o.starts_at, o.ends_at
                     ROWS UNBOUNDED PRECEDING)) c
 WHERE c.closes
$$;
COMMENT ON FUNCTION analytics.access(timestamptz, timestamptz, boolean) IS 'Each lineage''s entitled time (CONTRACT.md §3.2: active or inGracePeriod) as disjoint intervals [starts_at, ends_at): the union of analytics.entitlement_spans that meet [p_lo, p_hi] (ends in [p_lo, p_hi) and starts in (p_lo, p_hi] are exact). ended_by_refund: a refund, not an expiry or a billing state, ended the interval; ended_by_billing: a grace period ended it (billing retry or another billing state).';
GRANT EXECUTE ON FUNCTION analytics.access(timestamptz, timestamptz, boolean) TO ledger_reader;
