-- `ledger jobs retry ID`: a job that failed for good runs again now, with a fresh three days.
-- A job of a queue (a webhook delivery) joins its queue again in its own place: it runs when
-- the jobs before it are done. Returns the job's state after the call ('pending' or
-- 'waiting'), its state when it had not failed, or null when there is no such job.
CREATE OR REPLACE FUNCTION ledger.retry_job(p_id bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_state text;
    v_queue text;
BEGIN
    SELECT state, queue INTO v_state, v_queue FROM ledger.jobs WHERE id = p_id FOR UPDATE;
    IF v_state = 'failed' THEN
        UPDATE ledger.jobs
           SET state = CASE WHEN v_queue IS NULL THEN 'pending' ELSE 'waiting' END,
               run_after = now(), failing_since = NULL, finished_at = NULL, outcome = NULL
         WHERE id = p_id;
        IF v_queue IS NOT NULL THEN
            PERFORM ledger.promote_queue(v_queue);
        END IF;
        SELECT state INTO v_state FROM ledger.jobs WHERE id = p_id;
        RETURN v_state;
    END IF;
    RETURN v_state;
END
$$;
REVOKE ALL ON FUNCTION ledger.retry_job(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.retry_job(bigint) TO ledger_writer;
