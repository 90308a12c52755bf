-- A time from an event's data (ISO-8601 UTC with microseconds, Schema/EVENTS.md) as the ledger
-- prints times (ISO-8601 UTC with milliseconds), for ledger.user_history's summaries; null for null.
CREATE OR REPLACE FUNCTION ledger.history_time(p_time text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT to_char(p_time::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
REVOKE ALL ON FUNCTION ledger.history_time(text) FROM PUBLIC;
