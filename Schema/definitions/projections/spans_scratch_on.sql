-- ledger.make_spans_scratch on the worker that holds p_route's shard (ledger.worker_routes):
-- on a Citus coordinator it is distributed by p_route, colocated with the log, with
-- force_delegation (ledger.distribute), so that `ledger migrate` makes each worker's tables in
-- the migration's transaction, one statement a worker (Citus delegates no call made inside a
-- function, so a loop in SQL would make them on the coordinator again).
-- Returns the group that answered, which the caller checks.
CREATE OR REPLACE FUNCTION ledger.spans_scratch_on(p_route text) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    RETURN ledger.make_spans_scratch();
END
$$;
REVOKE ALL ON FUNCTION ledger.spans_scratch_on(text) FROM PUBLIC;
