-- How many transactions Citus has committed on this coordinator and not yet on a worker: the
-- records of pg_dist_transaction whose prepared transaction is still on its worker. Citus
-- commits the coordinator's part of a 2PC first, then sends each worker COMMIT PREPARED, and its
-- recovery (every citus.recover_2pc_interval) finishes what a crash left between the two and
-- deletes the records it has seen committed. A worker that does not answer counts each of its
-- records. 0 on one server, and without asking the workers when there is no record.
--
-- A rebuild's replay and catch-up passes, and a verify, on a cluster compare the coordinator's
-- snapshot with what the workers' snapshots show, so each starts only when this is 0, with the
-- writers' gate held (ClusterSnapshot.swift): a transaction in between is visible to the one and
-- not to the others.
CREATE OR REPLACE FUNCTION ledger.prepared_in_doubt() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    in_doubt bigint;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_transaction') IS NULL THEN
        RETURN 0;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_dist_transaction) THEN
        RETURN 0;
    END IF;
    EXECUTE $q$
        WITH prepared AS (
            SELECT n.groupid, w.success, w.result
              FROM run_command_on_workers('SELECT coalesce(string_agg(gid, '' ''), '''') FROM pg_prepared_xacts') AS w
              JOIN pg_catalog.pg_dist_node n ON n.nodename = w.nodename AND n.nodeport = w.nodeport
        )
        SELECT count(*) FROM pg_catalog.pg_dist_transaction t JOIN prepared p USING (groupid)
         WHERE NOT p.success OR t.gid = ANY (string_to_array(p.result, ' '))
    $q$ INTO in_doubt;
    RETURN in_doubt;
END
$$;
REVOKE ALL ON FUNCTION ledger.prepared_in_doubt() FROM PUBLIC;
