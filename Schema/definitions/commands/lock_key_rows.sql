-- Takes the row locks of ledger.key_locks on the keys p_keys, in their order (ledger.lock_keys
-- sorts them), to the end of the transaction: a row is made the first time its key is locked,
-- and an INSERT … ON CONFLICT DO UPDATE whose WHERE is false locks the row it finds without
-- writing it (PostgreSQL locks every conflicting row of a DO UPDATE, whether its condition holds
-- or not). One statement a key: on a Citus cluster each is routed to the node that holds the
-- key's shard, where every node's command taking that key waits. Security definer: the callers
-- (ledger_writer, ledger_store) are given no rights on the table.
CREATE OR REPLACE FUNCTION ledger.lock_key_rows(p_keys text[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    k text;
BEGIN
    FOREACH k IN ARRAY p_keys LOOP
        INSERT INTO ledger.key_locks AS l (key) VALUES (k)
            ON CONFLICT (key) DO UPDATE SET key = l.key WHERE false;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION ledger.lock_key_rows(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.lock_key_rows(text[]) TO ledger_writer;
