-- The catch-up readers ask each worker for its horizon by a function Citus routes to it
-- (ledger.node_read_horizon, over Citus's cached connections) instead of run_command_on_workers,
-- which opens a connection to every worker on every read: ledger.read_horizons gains a column,
-- the key to route by, and the definitions create it again.
DROP FUNCTION IF EXISTS ledger.read_horizons();
