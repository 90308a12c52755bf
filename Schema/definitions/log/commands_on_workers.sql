-- Whether commands run on the workers of a Citus cluster as well as on the node a client is
-- connected to: true on a ledger whose log is distributed, where the entry point is pushed down to
-- the user's worker (ledger.execute_user_commands) and a client may be connected to any node;
-- false on one server. Written false here, and made true on a distributed log by
-- ledger.install_commands_on_workers, which `ledger migrate` runs after the definitions and
-- ledger.distribute after placing the log: a constant the planner inlines, so that one server
-- pays nothing to ask.
--
-- What follows it (docs/scale-out.md, "The entry point on the user's worker"):
-- - ledger.lock_keys takes the keys' locks as row locks of ledger.key_locks, on the nodes of
--   the keys' shards, where commands on two nodes meet; one server keeps advisory locks;
-- - ledger.read_horizons adds a row for each worker's group, whose horizon the reader asks there;
-- - a rebuild's and a verify's consistent start hold each worker's writers' gate
--   (ClusterSnapshot).
CREATE OR REPLACE FUNCTION ledger.commands_on_workers() RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT false
$$;
