-- Append-only, whoever asks: UPDATE, DELETE and TRUNCATE fail.
CREATE OR REPLACE FUNCTION ledger.refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger.events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Record a new event (a refund, a cancel) instead of changing history.';
END
$$;
-- The triggers, one statement each (EXECUTE): on a Citus cluster, where the log may be
-- distributed, Citus makes a trigger on the shards from its statement's own text, and a script
-- of several statements is refused there (*cannot insert multiple commands into a prepared
-- statement*).
-- ALWAYS: they fire under session_replication_role = replica too, which otherwise turns every
-- trigger off; a superuser has to disable them by name (ALTER TABLE … DISABLE TRIGGER) to
-- change the log, and `ledger verify --chain` still sees a changed event (README, "Who can do what").
DO $triggers$
BEGIN
    EXECUTE 'CREATE OR REPLACE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON ledger.events
                 FOR EACH ROW EXECUTE FUNCTION ledger.refuse_change()';
    EXECUTE 'CREATE OR REPLACE TRIGGER events_no_truncate BEFORE TRUNCATE ON ledger.events
                 FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_change()';
    EXECUTE 'ALTER TABLE ledger.events ENABLE ALWAYS TRIGGER events_append_only';
    EXECUTE 'ALTER TABLE ledger.events ENABLE ALWAYS TRIGGER events_no_truncate';
END
$triggers$;
