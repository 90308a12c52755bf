-- A job's store call succeeded: applies what it learned (p_effect, a notification for
-- ledger.notify, as the store's own notifications are applied; null when the call was the
-- whole effect) and marks the job done, in one transaction, so the effect commits once. The
-- follow-up jobs (p_follow: [{kind, purpose, args}], e.g. an acknowledgement) are written only
-- when the payment is recorded or already held (or the call was the whole effect: a check of a
-- recorded payment), and carry the job's token; when the effect is parked (its owner unknown)
-- they are written `waiting` for its release. A store answer the
-- rules refuse fails the job for good with the refusal. A job of a queue (a webhook delivery)
-- lets the next of its queue run. Returns the effect's result, or
-- 'duplicate' when the claim was lost (another runner took the job after the lease ran out).
CREATE OR REPLACE FUNCTION ledger.finish_job(p_id bigint, p_attempt integer, p_effect jsonb, p_follow jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    j ledger.jobs;
    r ledger.command_result := ROW('done', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    f jsonb;
BEGIN
    SELECT * INTO j FROM ledger.jobs WHERE id = p_id FOR UPDATE;
    IF NOT FOUND OR j.state <> 'pending' OR j.attempts <> p_attempt THEN
        RETURN ROW('duplicate', NULL, 'the job was claimed by another runner', NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    IF p_effect IS NOT NULL THEN
        r := ledger.notify(p_effect);
        IF r.status = 'rejected' THEN
            UPDATE ledger.jobs
               SET state = 'failed', finished_at = now(), leased_until = NULL, outcome = 'rejected',
                   last_status = NULL, last_code = r.code, last_error = r.message
             WHERE id = p_id;
            RETURN r;
        END IF;
    END IF;
    IF p_effect IS NULL OR r.status IN ('recorded', 'duplicate') THEN
        FOR f IN SELECT value FROM jsonb_array_elements(coalesce(p_follow, '[]')) LOOP
            PERFORM ledger.add_job(f, j.secret, j.caused_by);
        END LOOP;
    ELSIF r.status = 'parked' THEN
        -- Whose payment is not known yet: the follow-ups wait for the notification's release
        -- (ledger.release_parked wakes them).
        INSERT INTO ledger.jobs (kind, purpose, args, secret, caused_by, state)
        SELECT x.job->>'kind', x.job->>'purpose',
               coalesce(x.job->'args', '{}') || jsonb_build_object('waitsFor', p_effect->>'notificationId'),
               j.secret, j.caused_by, 'waiting'
          FROM jsonb_array_elements(coalesce(p_follow, '[]')) AS x(job)
        ON CONFLICT (purpose) DO NOTHING;
    END IF;
    UPDATE ledger.jobs
       SET state = 'done', finished_at = now(), leased_until = NULL, secret = NULL,
           outcome = r.status, payment_seq = r.payment_seq
     WHERE id = p_id;
    -- The next job of its queue runs now (ledger.promote_queue).
    IF j.queue IS NOT NULL THEN
        PERFORM ledger.promote_queue(j.queue);
    END IF;
    RETURN r;
END
$$;
REVOKE ALL ON FUNCTION ledger.finish_job(bigint, integer, jsonb, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.finish_job(bigint, integer, jsonb, jsonb) TO ledger_store;
