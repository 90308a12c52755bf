-- The owner of every event of a set (ledger.event_owner of each one's data), or null when they
-- have several: what a set engine hands ledger.project_positions, which on a Citus cluster sends
-- each statement to that one owner's shard.
CREATE OR REPLACE FUNCTION ledger.sole_owner(p_data jsonb[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT CASE WHEN count(DISTINCT o) = 1 THEN min(o) END
          FROM (SELECT ledger.event_owner(x, NULL) FROM unnest(p_data) AS x) AS y(o));
REVOKE ALL ON FUNCTION ledger.sole_owner(jsonb[]) FROM PUBLIC;
