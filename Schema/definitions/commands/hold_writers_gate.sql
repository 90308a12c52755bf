-- Takes the writers' gate (ledger.writers_gate) alone on the node this runs on, to the end of the
-- transaction, and returns that node's group: a rebuild's swap calls it once per worker group
-- with that group's route (ledger.worker_routes), after taking the gate on the coordinator.
--
-- Every command takes the gate shared on the node that runs it. Through the coordinator that is
-- the coordinator; a command pushed down to a worker, or sent to one, takes it there. On a
-- Citus coordinator the function is distributed by p_route, colocated with the log, with
-- force_delegation (ledger.distribute): Citus then runs a call made inside a transaction block on
-- the worker that holds p_route's shard, as a part of that transaction, so the lock is held
-- until the transaction ends everywhere. The swap renames distributed tables, which makes its
-- transaction a 2PC: each worker's part is committed, and its gate opened, after the
-- coordinator's commit (without a 2PC, Citus commits a worker's part before the coordinator's).
-- On one server it takes the gate there, group 0.
CREATE OR REPLACE FUNCTION ledger.hold_writers_gate(p_route text) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(ledger.writers_gate());
    RETURN ledger.local_node_group();
END
$$;
REVOKE ALL ON FUNCTION ledger.hold_writers_gate(text) FROM PUBLIC;
