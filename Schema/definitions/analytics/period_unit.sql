-- The period unit, checked: day, week, month or year.
CREATE OR REPLACE FUNCTION analytics.period_unit(p_by text)
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
GRANT EXECUTE ON FUNCTION analytics.period_unit(text) TO ledger_reader;
