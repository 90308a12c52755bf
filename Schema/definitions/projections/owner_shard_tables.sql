-- The names of p_schema's tables p_tables on the shard that holds p_owners (all of one shard, as
-- ledger.settle_spans groups them), when that shard is placed on this node and this transaction reads
-- and writes it in this backend; else null. A projection function made by
-- ledger.install_shard_path then runs its statements on those tables, planned once per session,
-- instead of through Citus, which plans a statement that joins tables anew on every call
-- (BENCHMARKS.md, "Where a worker's time goes, statement by statement").
--
-- In this backend: Citus runs a transaction's statements on a local shard in the backend itself
-- (local execution), unless the transaction reached this node over a connection before, and a
-- statement on the shard tables would then miss what those connections wrote. So the owner's
-- newest event is asked both ways, through Citus and on the log's shard table: a command appends
-- before its projections, so if Citus wrote it over another connection, the shard table here does
-- not show it yet. Where commands do not run on the workers, null at once: one server never asks.
CREATE OR REPLACE FUNCTION ledger.owner_shard_tables(p_schema text, p_tables text[], p_owners text[])
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    v_names  text[];
    v_events text;
    v_seen   bigint;
    v_here   bigint;
    v_placed boolean;
    v_here_placed boolean;
    v_shard  bigint;
    -- The owner as a value: Citus then plans the statement on the log once per session.
    v_owner  text := p_owners[1];
BEGIN
    IF NOT ledger.commands_on_workers() OR coalesce(cardinality(p_owners), 0) = 0 THEN
        RETURN NULL;
    END IF;
    -- Static statements, planned once a session (an EXECUTE is parsed and planned on every
    -- call: half of the call's time, BENCHMARKS.md); they name Citus's catalog and functions,
    -- which exist only where the extension does, and run only there (above). A shadow schema's
    -- tables are placed on the cluster after their functions are made.
    SELECT EXISTS (SELECT FROM pg_dist_partition
                    WHERE logicalrelid = to_regclass(format('%I.%I', p_schema, p_tables[1])))
      INTO v_placed;
    IF NOT v_placed THEN
        RETURN NULL;
    END IF;
    -- Placed here: the metadata names this node's group for the owner's shard of the log (the
    -- tables colocated with it move with it). The shard's tables alone do not say so: a node that
    -- a shard moved away from keeps them until Citus's cleanup drops them (pg_dist_cleanup), and
    -- statements on them would write rows nobody reads.
    SELECT array_agg(shard_name(format('%I.%I', p_schema, u.t)::regclass,
                                get_shard_id_for_distribution_column(format('%I.%I', p_schema, u.t), v_owner)) ORDER BY u.n),
           shard_name('ledger.events'::regclass, get_shard_id_for_distribution_column('ledger.events', v_owner)),
           get_shard_id_for_distribution_column('ledger.events', v_owner)
      INTO v_names, v_events, v_shard
      FROM unnest(p_tables) WITH ORDINALITY AS u(t, n);
    -- A statement of its own, measured against a subquery of the query above (BENCHMARKS.md,
    -- "The guard's placement question").
    SELECT EXISTS (SELECT FROM pg_dist_placement p
                    WHERE p.shardid = v_shard AND p.groupid = (SELECT g.groupid FROM pg_dist_local_group g))
      INTO v_here_placed;
    IF NOT v_here_placed OR to_regclass(v_events) IS NULL
       OR EXISTS (SELECT FROM unnest(v_names) AS x WHERE to_regclass(x) IS NULL) THEN
        RETURN NULL;
    END IF;
    SELECT max(e.position) INTO v_seen FROM ledger.events e WHERE e.user_id = v_owner;
    EXECUTE format('SELECT max(position) FROM %s WHERE user_id = $1', v_events) INTO v_here USING v_owner;
    RETURN CASE WHEN v_seen IS NOT DISTINCT FROM v_here THEN v_names END;
END
$$;
REVOKE ALL ON FUNCTION ledger.owner_shard_tables(text, text[], text[]) FROM PUBLIC;
