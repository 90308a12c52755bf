-- Makes this node's scratch tables of the deferred spans (ledger.make_spans_scratch) when it has
-- none: on a Citus worker added since `ledger migrate` last ran (citus_add_node), to which a
-- rebalance then moves shards, and so commands. `ledger migrate` makes them on each worker that
-- holds a shard (ledger.spans_scratch_on); a worker added without shards is out of its reach, and
-- every command sent there once a shard arrives would fail (relation "ledger.spans_settle" does not
-- exist; CommandsOnWorkers.aWorkerAddedAndTheShardsRebalancedUnderWritesLoseNothing). Its callers
-- ask only where commands run on the workers, and only when the table is missing: a catalog
-- lookup a command.
-- SECURITY DEFINER: a command may run as ledger_writer, which creates no table. Two commands that
-- meet here take turns (an advisory lock of this node, to the commit): the second finds the
-- tables the first made.
CREATE OR REPLACE FUNCTION ledger.spans_scratch_here() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('ledger.spans_scratch_here'));
    IF to_regclass('ledger.spans_settle') IS NULL THEN
        PERFORM ledger.make_spans_scratch();
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.spans_scratch_here() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.spans_scratch_here() TO ledger_writer;
