-- A route to each worker group of a Citus coordinator: a key whose shard of the log is placed
-- there, so that a function distributed by its argument and colocated with the log runs on that
-- worker when called with it (ledger.node_read_horizon, ledger.hold_writers_gate). The key is
-- 'horizon:N' for some N below 1024; null for a worker holding no shard of the log. Nothing on
-- one server or on a worker. Citus hashes a text key with hashtext and gives each shard a range
-- of it. Static, so that its plan is kept: 0.2 ms on the test cluster, where
-- get_shard_id_for_distribution_column took 0.3 ms a key and a dynamic statement 0.5 ms
-- (BENCHMARKS.md, "The readers' checkpoint per node group").
CREATE OR REPLACE FUNCTION ledger.worker_routes(OUT node_group integer, OUT route text)
RETURNS SETOF record
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_node') IS NULL OR ledger.local_node_group() <> 0 THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT n.groupid,
           (SELECT 'horizon:' || i
              FROM generate_series(0, 1023) AS i
             WHERE EXISTS (SELECT FROM pg_catalog.pg_dist_shard AS s
                             JOIN pg_catalog.pg_dist_placement AS p ON p.shardid = s.shardid
                            WHERE s.logicalrelid = 'ledger.events'::regclass AND p.groupid = n.groupid
                              AND hashtext('horizon:' || i) BETWEEN s.shardminvalue::integer AND s.shardmaxvalue::integer)
             LIMIT 1)
      FROM pg_catalog.pg_dist_node AS n
     WHERE n.groupid <> 0 AND n.noderole = 'primary' AND n.isactive
     ORDER BY n.groupid;
END
$$;
REVOKE ALL ON FUNCTION ledger.worker_routes() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.worker_routes() TO ledger_reader, ledger_writer;
