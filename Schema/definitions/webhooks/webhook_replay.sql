-- `ledger webhooks replay ENDPOINT --from POSITIONS`: every delivery of endpoint p_id from log
-- position p_from on (of an event at or after it, or of a change such an event caused or that
-- was noticed after it), done or failed, is sent again in its order, each with its own event id
-- and body: they join their queues waiting, behind what is running. p_from holds a position per
-- node group to replay (position >> 48 names the group: CatchUpReader), each compared with the
-- deliveries of its own group alone, since two groups' positions are unrelated; a group it does
-- not name is not replayed. On one server, one position. Events from before the
-- endpoint was added were never its deliveries and are not sent (the event feed, GET /v1/events,
-- reads the log from any position). Returns the deliveries queued again; null when there is
-- no such endpoint.
CREATE OR REPLACE FUNCTION ledger.webhook_replay(p_id bigint, p_from bigint[])
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_count integer;
    v_queue text;
BEGIN
    PERFORM FROM ledger.webhook_endpoints WHERE id = p_id AND removed_at IS NULL FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    UPDATE ledger.jobs
       SET state = 'waiting', run_after = now(), failing_since = NULL, finished_at = NULL, outcome = NULL,
           last_status = NULL, last_code = NULL, last_error = NULL
     WHERE kind = 'webhook.delivery' AND args->>'endpoint' = p_id::text
       AND state IN ('done', 'failed')
       AND EXISTS (SELECT FROM unnest(p_from) AS f(position)
                    WHERE queue_position >= f.position AND queue_position >> 48 = f.position >> 48);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    FOR v_queue IN SELECT DISTINCT queue FROM ledger.jobs
                    WHERE kind = 'webhook.delivery' AND args->>'endpoint' = p_id::text
                      AND state = 'waiting' AND queue IS NOT NULL
                    ORDER BY queue LOOP
        PERFORM ledger.promote_queue(v_queue);
    END LOOP;
    RETURN v_count;
END
$$;
REVOKE ALL ON FUNCTION ledger.webhook_replay(bigint, bigint[]) FROM PUBLIC;
