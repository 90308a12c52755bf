-- Where a delivery goes and the key it is signed with, for the runner that sends it; no row
-- when the endpoint was removed. The one way the server's login reads a signing secret.
CREATE OR REPLACE FUNCTION ledger.webhook_target(p_id bigint)
RETURNS TABLE (url text, secret text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT e.url, e.secret FROM ledger.webhook_endpoints e WHERE e.id = p_id AND e.removed_at IS NULL;
$$;
REVOKE ALL ON FUNCTION ledger.webhook_target(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.webhook_target(bigint) TO ledger_store;
