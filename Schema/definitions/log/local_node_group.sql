-- The node group this runs on: a Citus node's (pg_dist_local_group: the coordinator is 0, each
-- worker its own), 0 on one server. The node group names whose transaction ids an event's `tx`
-- is in (position >> 48: ledger.read_horizons).
CREATE OR REPLACE FUNCTION ledger.local_node_group() RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_group integer := 0;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_local_group') IS NOT NULL THEN
        EXECUTE 'SELECT groupid FROM pg_catalog.pg_dist_local_group' INTO v_group;
    END IF;
    RETURN v_group;
END
$$;
REVOKE ALL ON FUNCTION ledger.local_node_group() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.local_node_group() TO ledger_reader, ledger_writer;
