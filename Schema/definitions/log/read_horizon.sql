-- The catch-up readers' horizon (the feed, the webhooks, CatchUpReader): every event whose `tx`
-- is below it is final, visible to every reader from now on, and no event committed later has a
-- `tx` below it. The readers ask for it in a statement of its own, then read the events below it.
--
-- On one server it is the oldest transaction still running (pg_snapshot_xmin).
--
-- On a Citus coordinator two more things hold:
-- - `tx` is the coordinator's transaction id (the column's default is evaluated there), while a
--   statement on a distributed table evaluates pg_current_snapshot() on each worker, in the
--   worker's own ids. So the readers compute the horizon here, alone, and pass it on as a
--   constant.
-- - A transaction that wrote to two workers commits on the coordinator first, then sends each
--   worker COMMIT PREPARED. Between the two (a moment, or until Citus's recovery after a crash)
--   its id is below the coordinator's xmin while its events are still invisible on a worker.
--   Citus writes a record of each prepared transaction into pg_dist_transaction in the
--   coordinator's transaction itself, so the record's xmin is that transaction's id, and keeps
--   it until its recovery has seen the worker's part committed. The horizon stays below the
--   oldest record. (Its outer_xid column is not that id: it names a transaction of another
--   database, for Citus's management commands, and is 0 otherwise.)
--   The snapshot comes before the records are read: a transaction that ends between the two
--   has its records visible to the second statement.
--   xmin is 32 bits; a record lives until the next recovery, so it is within 2^31 ids of the
--   snapshot's xmax, whose epoch it has, or the one before when its low bits are greater.
--
-- The records go when Citus's recovery runs (citus.recover_2pc_interval, a minute by default):
-- that bounds how far a reader trails a 2PC transaction (docs/scale-out.md, "Readers on a cluster").
CREATE OR REPLACE FUNCTION ledger.read_horizon() RETURNS xid8
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    snapshot pg_snapshot := pg_current_snapshot();
    horizon  xid8 := pg_snapshot_xmin(snapshot);
    next     numeric := pg_snapshot_xmax(snapshot)::text::numeric;
    in_doubt numeric;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_transaction') IS NOT NULL THEN
        SELECT min(CASE WHEN r.x < next % 4294967296 THEN next - next % 4294967296 + r.x
                        ELSE next - next % 4294967296 - 4294967296 + r.x END)
          INTO in_doubt
          FROM (SELECT xmin::text::numeric AS x FROM pg_catalog.pg_dist_transaction) AS r;
        horizon := least(horizon, in_doubt::text::xid8);
    END IF;
    RETURN horizon;
END
$$;
REVOKE ALL ON FUNCTION ledger.read_horizon() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.read_horizon() TO ledger_reader, ledger_writer;
