-- What the caller's snapshot of the log shows, for ledger.project_unseen: the transaction's
-- snapshot as text (pg_current_snapshot()), and where commands run on the workers of a Citus
-- cluster (ledger.commands_on_workers), each worker group's greatest position the transaction
-- sees, ' g:position' each (g * 2^48 when it sees none of that group's).
--
-- A worker's events carry that worker's transaction ids (`tx`), which the coordinator's snapshot
-- cannot judge, and positions from its range of the log's identity, taken one at a time (the
-- sequence caches one value). Such a snapshot is taken with the writers' gate of every node held
-- alone (ClusterSnapshot), when no command is running on any node: so every event of group g at
-- or below its greatest visible position is seen, and every one above it was appended later.
-- Groups 1 to the greatest in pg_dist_node: each a probe of the log's index on position, shard
-- by shard. Run it in the transaction whose snapshot it describes.
CREATE OR REPLACE FUNCTION ledger.log_seen() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_seen   text := pg_current_snapshot()::text;
    v_groups integer;
    v_last   bigint;
BEGIN
    IF NOT ledger.commands_on_workers() THEN
        RETURN v_seen;
    END IF;
    -- (A statement of its own: the table exists only where the extension does.)
    EXECUTE 'SELECT max(groupid) FROM pg_catalog.pg_dist_node' INTO v_groups;
    FOR g IN 1 .. coalesce(v_groups, 0) LOOP
        SELECT max(e.position) INTO v_last FROM ledger.events e
         WHERE e.position >= g::bigint << 48 AND e.position < (g::bigint + 1) << 48;
        v_seen := v_seen || format(' %s:%s', g, coalesce(v_last, g::bigint << 48));
    END LOOP;
    RETURN v_seen;
END
$$;
REVOKE ALL ON FUNCTION ledger.log_seen() FROM PUBLIC;
