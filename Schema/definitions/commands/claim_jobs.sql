-- A runner's claim on up to p_limit due jobs of the kinds it can run, oldest due first: each is
-- leased for p_lease (its run_after moves past the lease, so a runner that dies loses it then)
-- and its attempt counted. Rows another runner is claiming are skipped, not waited for. The
-- attempt number is the claim: finish_job, postpone_job and fail_job take it, and do nothing
-- once another runner has claimed the job again.
CREATE OR REPLACE FUNCTION ledger.claim_jobs(p_limit integer, p_lease interval, p_kinds text[])
RETURNS TABLE (id bigint, kind text, args jsonb, secret text, attempts integer, created_at timestamptz)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    UPDATE ledger.jobs j
       SET attempts = j.attempts + 1, run_after = now() + p_lease, leased_until = now() + p_lease
     WHERE j.id IN (SELECT d.id FROM ledger.jobs d
                     WHERE d.state = 'pending' AND d.run_after <= now() AND d.kind = ANY(p_kinds)
                     ORDER BY d.run_after, d.id
                     LIMIT p_limit
                       FOR UPDATE SKIP LOCKED)
    RETURNING j.id, j.kind, j.args, j.secret, j.attempts, j.created_at;
$$;
REVOKE ALL ON FUNCTION ledger.claim_jobs(integer, interval, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.claim_jobs(integer, interval, text[]) TO ledger_store;
