-- Whether the event at p_position was appended through the coordinator of a Citus cluster (or on
-- one server). The readers (the feed, the webhooks, CatchUpReader) order the log by `tx`, the
-- appending transaction's id, below a horizon the coordinator computes (ledger.read_horizon): the
-- coordinator's ids. Citus lets a client connected to a worker run the commands there (every node
-- holds its metadata), and such a command appends with the worker's transaction id, in ids of
-- its own, and a position from the worker's range of the log's identity: Citus gives the node
-- group g the values from g * 2^48 + 1, and the coordinator (group 0, like one server) those below
-- 2^48. The readers would place such an event among unrelated transactions of the coordinator,
-- or pass it for good. ledger.append and ledger.append_set refuse it, until the readers keep a
-- checkpoint per node (docs/scale-out.md, "Commands run through the coordinator").
CREATE OR REPLACE FUNCTION ledger.appended_through_the_coordinator(p_position bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT p_position < 281474976710656
$$;
