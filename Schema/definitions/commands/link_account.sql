-- `accountLink` line: notifications carrying this appAccountToken belong to p_user_id. Releases
-- the notifications parked for it.
CREATE OR REPLACE FUNCTION ledger.link_account(p_user_id text, p_store_code text, p_token text)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_user text;
    v_pos  bigint;
    k      ledger.command;
BEGIN
    -- The writers' gate first (ledger.writers_gate), as every command takes it.
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    IF coalesce(p_store_code, '') NOT IN ('AS', 'GG') THEN
        RETURN ledger.rejected('UNKNOWN_STORE', format('unknown store %s', p_store_code));
    ELSIF coalesce(p_user_id, '') = '' OR coalesce(p_token, '') = '' THEN
        RETURN ledger.rejected('INVALID_INPUT', 'userId and appAccountToken are required');
    END IF;
    k.kind := 'accountLink';
    k.store_code := p_store_code;
    k.app_account_token := p_token;
    PERFORM ledger.lock_keys(ledger.command_lock_keys(k));
    SELECT user_id INTO v_user FROM ledger.account_links WHERE store_code = p_store_code AND app_account_token = p_token;
    IF v_user = p_user_id THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    ELSIF FOUND THEN
        RETURN ledger.rejected('USER_INVALID', format('appAccountToken %s is linked to another user', p_token));
    END IF;
    v_pos := ledger.append('account:' || p_store_code || ':' || p_token, 'AccountLinked',
                           jsonb_build_object('storeCode', p_store_code, 'appAccountToken', p_token,
                                              'userId', p_user_id), now());
    PERFORM ledger.project_positions(ARRAY[v_pos], p_user_id);
    PERFORM ledger.release_parked(p_store_code, NULL, NULL, p_token, NULL);
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.link_account(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.link_account(text, text, text) TO ledger_writer;
