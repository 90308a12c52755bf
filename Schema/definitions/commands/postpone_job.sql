-- A job's store call failed in a way worth trying again (408, 429, 5xx, a timeout, a dropped
-- connection): it runs again after p_delay (the runner's backoff, or the store's Retry-After),
-- unless it has been failing for p_give_up_after, when it fails for good (and the next job of
-- its queue runs). Returns the job's state, or null when the claim was lost.
CREATE OR REPLACE FUNCTION ledger.postpone_job(p_id bigint, p_attempt integer, p_delay interval,
                                               p_status integer, p_code text, p_error text,
                                               p_give_up_after interval DEFAULT interval '3 days')
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_state text;
    v_queue text;
    v_now   timestamptz := now();
    v_since timestamptz := now() - p_give_up_after;
BEGIN
    -- The times as variables, not now() and a timestamptz's arithmetic (STABLE: it reads the
    -- time zone) in the CASE and coalesce below: on a Citus cluster the jobs are a Citus local
    -- table, and Citus refuses a function that is not IMMUTABLE inside CASE or COALESCE of a
    -- modification ("non-IMMUTABLE functions are not allowed in CASE or COALESCE statements");
    -- a variable is a parameter, which it accepts.
    UPDATE ledger.jobs
       SET state = CASE WHEN coalesce(failing_since, v_now) <= v_since THEN 'failed' ELSE 'pending' END,
           finished_at = CASE WHEN coalesce(failing_since, v_now) <= v_since THEN v_now END,
           run_after = v_now + p_delay, leased_until = NULL,
           failing_since = coalesce(failing_since, v_now),
           last_status = p_status, last_code = p_code, last_error = p_error
     WHERE id = p_id AND state = 'pending' AND attempts = p_attempt
    RETURNING state, queue INTO v_state, v_queue;
    IF v_state = 'failed' AND v_queue IS NOT NULL THEN
        PERFORM ledger.promote_queue(v_queue);
    END IF;
    RETURN v_state;
END
$$;
REVOKE ALL ON FUNCTION ledger.postpone_job(bigint, integer, interval, integer, text, text, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.postpone_job(bigint, integer, interval, integer, text, text, interval) TO ledger_store;
