-- The owner of each command, in order, for the library's routing on a Citus cluster
-- (CommandRouting): the user it names, or for a command that names none the owner its keys'
-- registries name now: a refund its payment's (payment_keys), a cancel its lineage's
-- (lineage_keys), a store notification the user ledger.notification_owner finds; '' when none is
-- known yet (a notification to be parked, a product declaration). So that a refund, a cancel or
-- a notification about a known payment runs on its user's worker and appends among that user's
-- events: the positions order one node's events only, and the webhooks deliver a user's events,
-- and a replay in ranges would apply them, in the order of their positions (docs/scale-out.md,
-- "The entry point on the user's worker"). Decides nothing: the command's own function asks the
-- registries again under its keys' locks. One routed lookup per such command. Security definer:
-- the writers are given no rights on the registries.
CREATE OR REPLACE FUNCTION ledger.command_owners(p_commands ledger.command[]) RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c        ledger.command;
    v_owner  text;
    v_key    text;
    v_store  text;
    v_owners text[] := '{}';
BEGIN
    FOREACH c IN ARRAY coalesce(p_commands, '{}') LOOP
        v_owner := NULL;
        -- Each key a variable before a statement names it: Citus routes by a parameter.
        IF c.kind = 'refund' THEN
            v_key := c.payment_seq;
            SELECT k.user_id INTO v_owner FROM ledger.payment_keys k WHERE k.payment_seq = v_key;
        ELSIF c.kind = 'cancel' THEN
            v_key := c.original_transaction_id;
            v_store := c.store_code;
            SELECT k.user_id INTO v_owner FROM ledger.lineage_keys k WHERE k.lineage_id = v_key AND k.store_code = v_store;
        ELSIF c.kind = 'notification' THEN
            v_owner := ledger.notification_owner(c.data);
        ELSE
            -- (A purchase's or a renewal's user is in its data.)
            v_owner := coalesce(c.user_id, c.data->>'userId');
        END IF;
        v_owners := v_owners || coalesce(v_owner, '');
    END LOOP;
    RETURN v_owners;
END
$$;
REVOKE ALL ON FUNCTION ledger.command_owners(ledger.command[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.command_owners(ledger.command[]) TO ledger_writer, ledger_store;
