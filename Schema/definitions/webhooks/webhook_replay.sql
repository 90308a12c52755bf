-- `ledger webhooks replay ENDPOINT --from POSITION`: every delivery of endpoint p_id from log
-- position p_from on (an event at or after it, or a change such an event caused or that was
-- noticed after it), done or failed, is sent again in its order, each with its own event id
-- and body: they join their queues waiting, behind what is running. When p_from lies before
-- the endpoint's checkpoint, the checkpoint moves back to just before it, so that events the
-- endpoint never had (those before it was added) are read and delivered too; those it had are
-- not written twice. Returns the deliveries queued again; null when there is no such endpoint
-- or no event at p_from.
CREATE OR REPLACE FUNCTION ledger.webhook_replay(p_id bigint, p_from bigint)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_tx xid8;
    v_count integer;
    v_queue text;
BEGIN
    PERFORM FROM ledger.webhook_endpoints WHERE id = p_id AND removed_at IS NULL FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT tx INTO v_tx FROM ledger.events WHERE position = p_from;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    UPDATE ledger.jobs
       SET state = 'waiting', run_after = now(), failing_since = NULL, finished_at = NULL, outcome = NULL,
           last_status = NULL, last_code = NULL, last_error = NULL
     WHERE kind = 'webhook.delivery' AND args->>'endpoint' = p_id::text
       AND queue_position >= p_from AND state IN ('done', 'failed');
    GET DIAGNOSTICS v_count = ROW_COUNT;
    FOR v_queue IN SELECT DISTINCT queue FROM ledger.jobs
                    WHERE kind = 'webhook.delivery' AND args->>'endpoint' = p_id::text
                      AND state = 'waiting' AND queue IS NOT NULL
                    ORDER BY queue LOOP
        PERFORM ledger.promote_queue(v_queue);
    END LOOP;
    UPDATE ledger.webhook_endpoints
       SET checkpoint_tx = v_tx, checkpoint_position = p_from - 1
     WHERE id = p_id AND (checkpoint_tx, checkpoint_position) > (v_tx, p_from - 1);
    RETURN v_count;
END
$$;
REVOKE ALL ON FUNCTION ledger.webhook_replay(bigint, bigint) FROM PUBLIC;
