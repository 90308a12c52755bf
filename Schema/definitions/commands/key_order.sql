-- The ledger's one order of command keys (ledger.lock_keys): first by the key's kind, in the
-- order in which every command function takes its own (restore, notification, account, payment,
-- store transaction, lineage, Google token, product), then by the key's hash; each key once,
-- nulls skipped. A plain SQL function, which the planner inlines into the statement that locks.
CREATE OR REPLACE FUNCTION ledger.key_order(p_keys text[])
RETURNS TABLE (hash bigint, key text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT hash, key FROM (
        SELECT DISTINCT array_position(
                   ARRAY['restore', 'notification', 'account', 'payment', 'transaction', 'lineage', 'token', 'product'],
                   split_part(k, ':', 1)) AS rank,
               hashtextextended(k, 0) AS hash, k AS key
          FROM unnest(p_keys) AS k
         WHERE k IS NOT NULL) AS keys
     ORDER BY rank NULLS LAST, hash, key
$$;
REVOKE ALL ON FUNCTION ledger.key_order(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.key_order(text[]) TO ledger_writer;
