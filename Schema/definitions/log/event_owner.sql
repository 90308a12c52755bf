-- An event's owner (ledger.events.user_id, 0010_event_owner.sql), as ledger.append and
-- ledger.append_set write it: p_given when the writer knows it (a store notification's, which its
-- data does not name), else the user the data names, else '' (a fact with no user). A stream's
-- owner is its latest event's (ledger.append). Inlined into the appends' statements.
CREATE OR REPLACE FUNCTION ledger.event_owner(p_data jsonb, p_given text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(p_given, p_data->>'userId', '');
REVOKE ALL ON FUNCTION ledger.event_owner(jsonb, text) FROM PUBLIC;
