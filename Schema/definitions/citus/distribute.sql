-- What `ledger migrate` does on a Citus coordinator (docs/scale-out.md): places every table of
-- ledger.distribution_plan across the cluster, once each, and returns the names of those it
-- placed this time. Nothing on a server without the citus extension, or with no worker
-- registered in this database (the extension and the node list are per database): there the
-- ledger is one server's, as it is on plain PostgreSQL. On an existing ledger moved onto Citus,
-- Citus copies each table's rows as it places it, in the migration's transaction.
--
-- The catalogs, small and read by every node, are reference tables: a copy on each node, written
-- everywhere at once (2PC). The log goes next, distributed by its owner (user_id); every other
-- table of a user's facts is distributed by user_id colocated with it, so that a command's
-- statements, which all name the owner, run on one worker; each key registry (and the account
-- links) is distributed by its own key; the jobs stay on the coordinator, in Citus's metadata.
-- The log's append-only triggers fire on its shards (citus.enable_unsafe_triggers, for this
-- transaction). Once the log is distributed, every function of the ledger is on every node,
-- the projection's functions are made again, under the custom plans a distributed log needs
-- (install_project_range.sql), and the queries that read it through SQL functions are made
-- PL/pgSQL (install_distributed_queries.sql). A rebuild swaps in new tables that its replay
-- placed already (ledger.distribute_shadow), and calls this in the swap's transaction for what a
-- ledger of the catalogs-only releases left on the coordinator.
CREATE OR REPLACE FUNCTION ledger.distribute() RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    v_placed text[] := '{}';
    v_log    boolean := false;
    p        record;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RETURN v_placed;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND isactive) THEN
        RETURN v_placed;
    END IF;
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'ledger.events'::regclass) THEN
        -- One connection per worker for the tables' rows, so that the projection's functions
        -- can be made again after them in this transaction (below): Citus changes no function
        -- in a transaction that has written shards in parallel.
        PERFORM set_config('citus.multi_shard_modify_mode', 'sequential', true);
    END IF;
    -- Every table to place is locked first, in the order it is placed, as create_distributed_table
    -- locks it (EXCLUSIVE). Otherwise an autovacuum ANALYZE of a table placed later, started while
    -- an earlier one is placed, can wait for this transaction while holding that table: a
    -- deadlock, seen when a demo ledger just written is moved onto the cluster. Waiting here,
    -- before this transaction has changed any of them, the server cancels the autovacuum instead.
    FOR p IN SELECT d.table_name FROM ledger.distribution_plan() AS d
              WHERE NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = d.table_name::regclass)
              ORDER BY d.placement <> 'reference', d.table_name <> 'ledger.events', d.table_name LOOP
        EXECUTE format('LOCK TABLE %s IN EXCLUSIVE MODE', p.table_name::regclass);
    END LOOP;
    FOR p IN SELECT d.table_name, d.placement, d.column_name FROM ledger.distribution_plan() AS d
              ORDER BY d.placement <> 'reference', d.table_name <> 'ledger.events', d.table_name LOOP
        CONTINUE WHEN EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = p.table_name::regclass);
        IF p.placement = 'reference' THEN
            PERFORM create_reference_table(p.table_name::regclass);
        ELSIF p.placement = 'coordinator' THEN
            -- Citus keeps such a table only where the coordinator is in its node list
            -- (citus_set_coordinator_host, which scripts/dev citus and docker-compose.yml run);
            -- without it the table stays the coordinator's alone, and a later `ledger migrate`
            -- adds it.
            CONTINUE WHEN NOT EXISTS (SELECT FROM pg_dist_node WHERE groupid = 0);
            PERFORM citus_add_local_table_to_metadata(p.table_name::regclass);
        ELSE
            PERFORM create_distributed_table(p.table_name::regclass, p.column_name,
                                             colocate_with => CASE WHEN p.placement = 'owner' AND p.table_name <> 'ledger.events'
                                                                   THEN 'ledger.events' ELSE 'none' END);
            v_log := v_log OR p.table_name = 'ledger.events';
        END IF;
        v_placed := v_placed || p.table_name;
    END LOOP;
    IF v_log THEN
        PERFORM ledger.install_project_range('ledger');
        PERFORM ledger.install_distributed_queries();
        PERFORM ledger.install_commands_on_workers();
    END IF;
    -- The functions that reach a worker by a route (ledger.worker_routes): distributed by their
    -- argument and colocated with the log, so that Citus runs a call on the worker holding that
    -- key's shard. The readers ask a worker's horizon outside any transaction block
    -- (ledger.node_read_horizon); a rebuild's swap takes a worker's writers' gate inside its
    -- transaction (ledger.hold_writers_gate), which Citus delegates only with force_delegation;
    -- `ledger migrate` makes each worker's scratch tables so too (ledger.spans_scratch_on). The
    -- entry point runs on the user's worker (ledger.execute_user_commands), a call made outside
    -- a transaction block, as the library makes it. Once each, also on a ledger distributed
    -- before they existed. So too the appends on the owner's node
    -- (ledger.install_appends_on_owner_nodes).
    IF EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'ledger.events'::regclass) THEN
        PERFORM ledger.install_appends_on_owner_nodes();
        FOR p IN SELECT f.name, f.forced
                   FROM (VALUES ('ledger.node_read_horizon(text)', false),
                                ('ledger.hold_writers_gate(text)', true),
                                ('ledger.spans_scratch_on(text)', true),
                                ('ledger.execute_user_commands(text,ledger.command[])', false)) AS f(name, forced)
                  WHERE NOT EXISTS (SELECT FROM pg_dist_object
                                     WHERE classid = 'pg_catalog.pg_proc'::regclass
                                       AND objid = f.name::regprocedure
                                       AND distribution_argument_index IS NOT NULL) LOOP
            PERFORM create_distributed_function(p.name::regprocedure, '$1', colocate_with => 'ledger.events',
                                                force_delegation => CASE WHEN p.forced THEN true END);
        END LOOP;
    END IF;
    RETURN v_placed;
END
$$;
REVOKE ALL ON FUNCTION ledger.distribute() FROM PUBLIC;
