-- Makes a distributed log's appends take their `tx` and `position` on the node that stores the
-- event, the owner's (ledger.event_on_owner_node): the column `tx` defaults to 0 there, and a
-- trigger on the shards gives each such row its node's transaction id and a position of its
-- node's range. ledger.distribute runs it on every `ledger migrate` once the log is placed, so a
-- ledger distributed before it gets it too; on one server, or before the log is placed, it does
-- nothing. Returns whether it changed anything. Idempotent.
--
-- The trigger is a plain one (not ALWAYS): Citus copies a moved shard's rows by logical
-- replication, under session_replication_role = replica, where it does not fire; and a copied
-- row's `tx` is never 0, so it would not change one anyway.
CREATE OR REPLACE FUNCTION ledger.install_appends_on_owner_nodes() RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_changed boolean := false;
BEGIN
    IF NOT ledger.distributed_log() THEN
        RETURN false;
    END IF;
    IF pg_get_expr((SELECT d.adbin FROM pg_attrdef d
                      JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
                     WHERE d.adrelid = 'ledger.events'::regclass AND a.attname = 'tx'),
                   'ledger.events'::regclass) IS DISTINCT FROM '''0''::xid8' THEN
        ALTER TABLE ledger.events ALTER COLUMN tx SET DEFAULT '0'::xid8;
        v_changed := true;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_trigger
                    WHERE tgrelid = 'ledger.events'::regclass AND tgname = 'events_on_owner_node') THEN
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
        -- One statement (Citus makes the shards' triggers from its text).
        EXECUTE 'CREATE TRIGGER events_on_owner_node BEFORE INSERT ON ledger.events
                     FOR EACH ROW WHEN (NEW.tx = ''0''::xid8) EXECUTE FUNCTION ledger.event_on_owner_node()';
        v_changed := true;
    END IF;
    RETURN v_changed;
END
$$;
REVOKE ALL ON FUNCTION ledger.install_appends_on_owner_nodes() FROM PUBLIC;
