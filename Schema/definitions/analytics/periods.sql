-- The periods of a report: one row per UTC calendar period that meets [p_from, p_to).
CREATE OR REPLACE FUNCTION analytics.periods(p_from date, p_to date, p_by text DEFAULT 'day')
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
GRANT EXECUTE ON FUNCTION analytics.periods(date, date, text) TO ledger_reader;
