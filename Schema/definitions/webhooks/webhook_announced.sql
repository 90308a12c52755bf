-- What endpoint p_id was last told of these lineages: entitled or not (absent: nothing yet).
CREATE OR REPLACE FUNCTION ledger.webhook_announced(p_id bigint, p_stores text[], p_lineages text[])
RETURNS TABLE (store_code text, lineage_id text, entitled boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT w.store_code, w.lineage_id, w.entitled
      FROM unnest(p_stores, p_lineages) t(store_code, lineage_id)
      JOIN ledger.webhook_entitlements w
        ON w.endpoint_id = p_id AND w.store_code = t.store_code AND w.lineage_id = t.lineage_id;
$$;
REVOKE ALL ON FUNCTION ledger.webhook_announced(bigint, text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.webhook_announced(bigint, text[], text[]) TO ledger_store;
