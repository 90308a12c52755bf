-- `ledger jobs retry ID`: a job that failed for good runs again now, with a fresh three days.
-- Returns the job's state after the call ('pending'), its state when it had not failed, or
-- null when there is no such job.
CREATE OR REPLACE FUNCTION ledger.retry_job(p_id bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_state text;
BEGIN
    SELECT state INTO v_state FROM ledger.jobs WHERE id = p_id FOR UPDATE;
    IF v_state = 'failed' THEN
        UPDATE ledger.jobs
           SET state = 'pending', run_after = now(), failing_since = NULL, finished_at = NULL, outcome = NULL
         WHERE id = p_id;
        RETURN 'pending';
    END IF;
    RETURN v_state;
END
$$;
REVOKE ALL ON FUNCTION ledger.retry_job(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.retry_job(bigint) TO ledger_writer;
