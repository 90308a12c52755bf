-- The node group this runs on and its ledger.read_horizon(): one worker's horizon for the
-- catch-up readers (ledger.read_horizons), asked by the readers themselves.
--
-- On a Citus coordinator the function is distributed by p_route, colocated with the log
-- (ledger.distribute), and p_route is there only to route: a call with a key whose shard of
-- ledger.events lives on a worker runs on that worker, over Citus's cached connection, when it
-- is a statement of its own outside a transaction block. In a transaction block, or on a node
-- without Citus's metadata, it runs where it is called and answers that node's group, so a
-- reader checks the group it asked for against the one answered. A read's horizons cost 1.3 ms
-- on the test cluster, its two workers' routed so, against 19.4 ms through run_command_on_workers,
-- which opens a connection to each (BENCHMARKS.md, "The readers' checkpoint per node group"). On
-- one server it answers group 0.
CREATE OR REPLACE FUNCTION ledger.node_read_horizon(p_route text, OUT node_group integer, OUT horizon xid8)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    node_group := ledger.local_node_group();
    horizon := ledger.read_horizon();
END
$$;
REVOKE ALL ON FUNCTION ledger.node_read_horizon(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.node_read_horizon(text) TO ledger_reader, ledger_writer;
