-- The catch-up readers keep a checkpoint per node group (CatchUpReader; ledger.read_horizons):
-- an event's `tx` is its appending transaction's id on the node that ran it, and two nodes' ids
-- are unrelated. A webhook endpoint's place was one (tx, position); it keeps node group 0's there
-- (the coordinator's, and one server's only group) and the other groups' in worker_checkpoints,
-- [{"tx": "xid8 as text", "position": n}], one per group, none until a worker's transaction has
-- appended. The functions that read and move the place change their signatures; the definitions
-- create them again.
ALTER TABLE ledger.webhook_endpoints ADD COLUMN worker_checkpoints jsonb NOT NULL DEFAULT '[]';
DROP FUNCTION IF EXISTS ledger.webhook_lock(bigint);
DROP FUNCTION IF EXISTS ledger.webhook_advance(bigint, xid8, bigint, timestamptz, jsonb, jsonb);
