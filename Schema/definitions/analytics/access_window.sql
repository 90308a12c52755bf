-- Whether the span of ledger.entitled_spans with these values states an interval of entitled
-- time that meets [p_lo, p_hi]: it is the last span of its lineage to start by p_hi, and the
-- interval so far ends at or after p_lo. One row per lineage and interval.
CREATE OR REPLACE FUNCTION analytics.access_window(p_starts_at timestamptz, p_ends_so_far timestamptz,
                                                   p_next_start timestamptz, p_lo timestamptz, p_hi timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT p_ends_so_far >= p_lo AND p_starts_at <= p_hi AND (p_next_start IS NULL OR p_next_start > p_hi)
$$;
COMMENT ON FUNCTION analytics.access_window(timestamptz, timestamptz, timestamptz, timestamptz, timestamptz) IS 'Whether the ledger.entitled_spans row with these starts_at, ends_so_far and next_start states an interval of entitled time that meets [p_lo, p_hi] (the rule of analytics.access, shared with analytics.churn).';
GRANT EXECUTE ON FUNCTION analytics.access_window(timestamptz, timestamptz, timestamptz, timestamptz, timestamptz) TO ledger_reader;
