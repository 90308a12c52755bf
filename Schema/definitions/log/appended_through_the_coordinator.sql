-- Whether the event at p_position was appended through the coordinator of a Citus cluster (or on
-- one server). Citus lets a client connected to a worker run the commands there (every node
-- holds its metadata), and such a command appends with the worker's transaction id and a
-- position from the worker's range of the log's identity: Citus gives the node group g the values
-- from g * 2^48 + 1, and the coordinator (group 0, like one server) those below 2^48. The readers
-- follow such events (a checkpoint per node group: ledger.read_horizons), but the command itself
-- would not be serialized with the coordinator's: the keys' advisory locks are each node's own,
-- and the store jobs a command adds live on the coordinator. (The writers' gate is held on every
-- node: a rebuild's swap takes each worker's in its transaction, and a rebuild's and a verify's
-- consistent start, once this allows a worker's position, each worker's by a connection of its
-- own.) ledger.append and ledger.append_set refuse it until the entry point is pushed
-- down with those moved (docs/scale-out.md, "Commands run through the coordinator").
CREATE OR REPLACE FUNCTION ledger.appended_through_the_coordinator(p_position bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT p_position < 281474976710656
$$;
