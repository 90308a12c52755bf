-- A dispatcher's hold on endpoint p_id for the rest of its transaction (`WebhookDispatcher`):
-- the endpoint's catch-up checkpoints (node group 0's, and the other groups' as JSON text), the instant up to which ended entitlements were looked
-- for, the types it receives and the transaction's now(). No row when the endpoint is removed
-- or another dispatcher holds it (skipped, not waited for: it is being advanced already).
CREATE OR REPLACE FUNCTION ledger.webhook_lock(p_id bigint)
RETURNS TABLE (checkpoint_tx text, checkpoint_position bigint, worker_checkpoints text, clock_until timestamptz,
               now timestamptz, event_types text[])
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT e.checkpoint_tx::text, e.checkpoint_position, e.worker_checkpoints::text, e.clock_until, now(), e.event_types
      FROM ledger.webhook_endpoints e
     WHERE e.id = p_id AND e.removed_at IS NULL
       FOR UPDATE SKIP LOCKED;
$$;
REVOKE ALL ON FUNCTION ledger.webhook_lock(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.webhook_lock(bigint) TO ledger_store;
