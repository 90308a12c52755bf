-- A job failed for good (a 4xx other than 408 and 429, an answer the ledger cannot use, a
-- purpose gone): kept with the store's status, code and the reason, for `ledger jobs list
-- --state failed` and `ledger jobs retry`. Its token is kept, so that a retry can run it. The
-- next job of its queue runs (a delivery failed for good holds back none of its user's later ones).
-- Returns false when the claim was lost.
CREATE OR REPLACE FUNCTION ledger.fail_job(p_id bigint, p_attempt integer, p_status integer, p_code text, p_error text)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_queue text;
    v_now   timestamptz := now();
BEGIN
    -- The time as a variable: Citus refuses now() inside a COALESCE of a modification of the
    -- jobs, a Citus local table there (postpone_job.sql).
    UPDATE ledger.jobs
       SET state = 'failed', finished_at = v_now, leased_until = NULL,
           failing_since = coalesce(failing_since, v_now), outcome = 'failed',
           last_status = p_status, last_code = p_code, last_error = p_error
     WHERE id = p_id AND state = 'pending' AND attempts = p_attempt
    RETURNING queue INTO v_queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF v_queue IS NOT NULL THEN
        PERFORM ledger.promote_queue(v_queue);
    END IF;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION ledger.fail_job(bigint, integer, integer, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.fail_job(bigint, integer, integer, text, text) TO ledger_store;
