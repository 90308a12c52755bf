-- What ended an interval of entitled time, from its span's ends so far: 'expiry' when a span
-- ends naturally at its end, else 'billing' when a grace period's span does, else 'refund'.
CREATE OR REPLACE FUNCTION analytics.access_end(p_natural_end timestamptz, p_billing_end timestamptz, p_ends_so_far timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN p_natural_end IS NOT DISTINCT FROM p_ends_so_far THEN 'expiry'
            WHEN p_billing_end = p_ends_so_far THEN 'billing'
            ELSE 'refund' END
$$;
COMMENT ON FUNCTION analytics.access_end(timestamptz, timestamptz, timestamptz) IS 'What ended an interval of entitled time, from its span''s natural_end_so_far, billing_end_so_far and ends_so_far: expiry, billing (a grace period ran out) or refund.';
GRANT EXECUTE ON FUNCTION analytics.access_end(timestamptz, timestamptz, timestamptz) TO ledger_reader;
