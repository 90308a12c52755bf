-- The horizons of the worker groups p_groups (ledger.read_horizons), each computed on its worker
-- through run_command_on_workers: a new connection to every worker, 17 ms a read on the test
-- cluster. The readers ask it only for the groups that ledger.node_read_horizon could not
-- answer: a group with no shard of the log to route by, a call made in a transaction block, or a
-- shard moved between the two statements. A worker that does not answer is left out: its group
-- waits for the next read, and nothing of it is skipped.
CREATE OR REPLACE FUNCTION ledger.worker_read_horizons(p_groups integer[], OUT node_group integer, OUT horizon xid8)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_node') IS NULL OR cardinality(p_groups) IS NOT DISTINCT FROM 0 THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE $q$
    SELECT n.groupid, w.result::xid8
      FROM run_command_on_workers('SELECT ledger.read_horizon()::text') AS w
      JOIN pg_catalog.pg_dist_node AS n
        ON n.nodename = w.nodename AND n.nodeport = w.nodeport AND n.noderole = 'primary'
     WHERE w.success AND n.groupid <> 0 AND n.groupid = ANY ($1)
     ORDER BY n.groupid
    $q$ USING p_groups;
END
$$;
REVOKE ALL ON FUNCTION ledger.worker_read_horizons(integer[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.worker_read_horizons(integer[]) TO ledger_reader, ledger_writer;
