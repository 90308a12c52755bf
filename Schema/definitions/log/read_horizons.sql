-- The catch-up readers' horizons, one per node group whose transactions append to the log: the
-- readers keep a checkpoint per group and read a group's events below its horizon alone.
--
-- An event's `tx` is the id of its appending transaction on the node that holds it (on a
-- distributed log the owner's worker, whichever node ran the command: ledger.event_on_owner_node;
-- on a log distributed by an earlier release, the node that ran it), and its position comes from
-- that node's range of the log's identity: Citus gives node group g the values from g * 2^48 + 1,
-- and the coordinator (group 0, like one server) those below 2^48. So `position >> 48` names the
-- node whose ids `tx` is in, and the order (tx, position) holds within a group only: two nodes'
-- ids are unrelated.
--
-- One row per group. Group 0's comes first, with its horizon, ledger.read_horizon(). On a Citus
-- coordinator a row for each worker group follows, horizon null: a worker's horizon is computed
-- on that worker (its own oldest running transaction and its own 2PC records: a worker that ran a
-- command coordinates that command's 2PC), and the reader asks for it next, each in a statement
-- of its own outside any transaction block, by ledger.node_read_horizon(route), which Citus runs
-- on the worker that holds route's shard of the log. `route` is ledger.worker_routes()'s: a key whose
-- shard of the log is placed on that group; null when none is (a worker holding no shard of
-- the log), and the reader asks ledger.worker_read_horizons for
-- such a group, and for one whose call was not routed there. Each horizon is taken before the
-- reader's statement on its group's events, as ledger.read_horizon() requires.
--
-- The workers' rows come on a distributed log only (ledger.commands_on_workers), on every read:
-- looking for a worker's event first would query every shard, 4 to 5 ms a read on the test
-- cluster, against about 1 ms for both workers' horizons routed to them (docs/scale-out.md,
-- "Readers on a cluster").
CREATE OR REPLACE FUNCTION ledger.read_horizons(OUT node_group integer, OUT horizon xid8, OUT route text)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    node_group := ledger.local_node_group();
    horizon := ledger.read_horizon();
    RETURN NEXT;
    -- An inlined constant: one server has nothing to ask. ledger.worker_routes() answers
    -- nothing on a worker.
    IF NOT ledger.commands_on_workers() THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT r.node_group, NULL::xid8, r.route FROM ledger.worker_routes() AS r;
END
$$;
REVOKE ALL ON FUNCTION ledger.read_horizons() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.read_horizons() TO ledger_reader, ledger_writer;
