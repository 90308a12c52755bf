-- Makes ledger.commands_on_workers() answer true on a log distributed on a Citus cluster
-- (ledger.distributed_log), where the entry point runs on the users' workers: the definitions
-- write it false, and `ledger migrate` applies them, then this (the file's last statement), and
-- ledger.distribute runs it again once it has placed the log. The function is made again from
-- its definition's text with the one constant changed, as install_distributed_queries.sql does;
-- Citus makes it again on every node. Returns whether it made it true. Idempotent.
CREATE OR REPLACE FUNCTION ledger.install_commands_on_workers() RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_text text;
BEGIN
    IF NOT ledger.distributed_log() THEN
        RETURN false;
    END IF;
    v_text := pg_get_functiondef('ledger.commands_on_workers()'::regprocedure);
    IF strpos(v_text, 'SELECT false') = 0 THEN
        RETURN strpos(v_text, 'SELECT true') > 0;
    END IF;
    EXECUTE replace(v_text, 'SELECT false', 'SELECT true');
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION ledger.install_commands_on_workers() FROM PUBLIC;
SELECT ledger.install_commands_on_workers();
