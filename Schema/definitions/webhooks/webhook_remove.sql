-- `ledger webhooks remove ENDPOINT`: the endpoint receives nothing more. Its deliveries not
-- yet made are failed with the reason (kept, as every job is); a delivery in flight may still
-- arrive. Returns false when there is no such endpoint.
CREATE OR REPLACE FUNCTION ledger.webhook_remove(p_id bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE ledger.webhook_endpoints SET removed_at = now() WHERE id = p_id AND removed_at IS NULL;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE ledger.jobs
       SET state = 'failed', finished_at = now(), leased_until = NULL, outcome = 'cancelled',
           last_error = 'the endpoint was removed'
     WHERE kind = 'webhook.delivery' AND args->>'endpoint' = p_id::text AND state IN ('pending', 'waiting');
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION ledger.webhook_remove(bigint) FROM PUBLIC;
