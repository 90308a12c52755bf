-- The keys in force: what the server compares a presented key's digest with.
CREATE OR REPLACE FUNCTION ledger.live_api_keys()
RETURNS TABLE (id bigint, role text, key_sha256 bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT k.id, k.role, k.key_sha256 FROM ledger.api_keys k WHERE k.revoked_at IS NULL ORDER BY k.id $$;

REVOKE ALL ON FUNCTION ledger.live_api_keys() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.live_api_keys() TO ledger_writer, ledger_reader;
