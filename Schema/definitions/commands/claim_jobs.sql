-- A runner's claim on up to p_limit due jobs of the kinds it can run, oldest due first: each is
-- leased for p_lease (its run_after moves past the lease, so a runner that dies loses it then)
-- and its attempt counted. Rows another runner is claiming are skipped, not waited for. The
-- attempt number is the claim: finish_job, postpone_job and fail_job take it, and do nothing
-- once another runner has claimed the job again.
--
-- The claimed ids go to the UPDATE as an array. With `id IN (subquery)`, a plan made without
-- knowing p_limit (a generic plan, and every plan of a SQL function's body) joins the subquery
-- to a sequential scan of the whole table, done jobs included: 3.5 ms a claim at 20,000 jobs,
-- and more with every delivery (EXPLAIN ANALYZE, BENCHMARKS.md). The array gives an index probe
-- per claimed id in any plan (0.48 ms), and PL/pgSQL keeps the plan for the session.
--
-- The claim's transaction commits without waiting for its WAL flush (synchronous_commit off,
-- local to the transaction, which the runner's claim is alone in: 0.48 to 0.31 ms a claim). A
-- claim lost in a crash of the database leaves the job as it was, due, so it runs again, as a
-- job run at least once may; the job's finish_job, which does wait, flushes the claim first. A
-- claim made inside a caller's own transaction makes that transaction's commit asynchronous too.
CREATE OR REPLACE FUNCTION ledger.claim_jobs(p_limit integer, p_lease interval, p_kinds text[])
RETURNS TABLE (id bigint, kind text, args jsonb, secret text, attempts integer, created_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
    UPDATE ledger.jobs j
       SET attempts = j.attempts + 1, run_after = now() + p_lease, leased_until = now() + p_lease
     WHERE j.id = ANY (ARRAY(SELECT d.id FROM ledger.jobs d
                              WHERE d.state = 'pending' AND d.run_after <= now() AND d.kind = ANY(p_kinds)
                              ORDER BY d.run_after, d.id
                              LIMIT p_limit
                                FOR UPDATE SKIP LOCKED))
    RETURNING j.id, j.kind, j.args, j.secret, j.attempts, j.created_at;
END
$$;
REVOKE ALL ON FUNCTION ledger.claim_jobs(integer, interval, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.claim_jobs(integer, interval, text[]) TO ledger_store;
