-- Moves endpoint p_id past what a dispatcher read (its checkpoint of node group 0 to (p_tx,
-- p_position), the other groups' to p_worker_checkpoints, its clock to p_clock) and writes the
-- deliveries that reading made, in the caller's transaction
-- (which holds the endpoint: ledger.webhook_lock). p_deliveries: [{purpose, queue,
-- queuePosition, causedBy, args}] in the order they are to be delivered; each joins its queue
-- waiting, and each queue's first job becomes pending when nothing of the queue is
-- (ledger.promote_queue, queues taken in one order). A delivery whose purpose exists (a replay
-- read the event again) is not written twice. p_entitlements: [{storeCode, lineageId,
-- entitled}], what the endpoint is now told of each lineage. Returns the deliveries written.
CREATE OR REPLACE FUNCTION ledger.webhook_advance(p_id bigint, p_tx xid8, p_position bigint,
                                                  p_worker_checkpoints jsonb, p_clock timestamptz,
                                                  p_deliveries jsonb, p_entitlements jsonb)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_written integer;
    v_queue text;
BEGIN
    WITH written AS (
        INSERT INTO ledger.jobs (kind, purpose, args, state, queue, queue_position, caused_by)
        SELECT 'webhook.delivery', d->>'purpose', d->'args', 'waiting', d->>'queue',
               (d->>'queuePosition')::bigint, (d->>'causedBy')::bigint
          FROM jsonb_array_elements(p_deliveries) WITH ORDINALITY AS x(d, n)
         ORDER BY x.n
        ON CONFLICT (purpose) DO NOTHING
        RETURNING queue)
    SELECT count(*) INTO v_written FROM written;
    FOR v_queue IN SELECT DISTINCT d->>'queue' AS q FROM jsonb_array_elements(p_deliveries) d ORDER BY q LOOP
        PERFORM ledger.promote_queue(v_queue);
    END LOOP;
    INSERT INTO ledger.webhook_entitlements (endpoint_id, store_code, lineage_id, entitled)
    SELECT p_id, x->>'storeCode', x->>'lineageId', (x->>'entitled')::boolean
      FROM jsonb_array_elements(p_entitlements) x
    ON CONFLICT (endpoint_id, store_code, lineage_id) DO UPDATE SET entitled = excluded.entitled;
    UPDATE ledger.webhook_endpoints
       SET checkpoint_tx = p_tx, checkpoint_position = p_position, worker_checkpoints = p_worker_checkpoints,
           clock_until = greatest(clock_until, p_clock)
     WHERE id = p_id;
    RETURN v_written;
END
$$;
REVOKE ALL ON FUNCTION ledger.webhook_advance(bigint, xid8, bigint, jsonb, timestamptz, jsonb, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.webhook_advance(bigint, xid8, bigint, jsonb, timestamptz, jsonb, jsonb) TO ledger_store;
