-- Records that the user turned auto-renew off; a duplicate when it is already off at that time.
CREATE OR REPLACE FUNCTION ledger.cancel(p_store_code text, p_original_transaction_id text, p_time timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    l           record;
    v_last_paid timestamptz;
    c           record;
    v_pos       bigint;
    k           ledger.command;
BEGIN
    k.kind := 'cancel';
    k.store_code := p_store_code;
    k.original_transaction_id := p_original_transaction_id;
    PERFORM ledger.lock_keys(ledger.command_lock_keys(k));
    -- The lineage's owner, asked of its registry; the rest is read among that owner's rows.
    l := ledger.lineage_found(p_store_code, p_original_transaction_id);
    IF l.user_id IS NULL THEN
        RETURN ledger.rejected('NOT_FOUND',
            format('no subscription %s on store %s', p_original_transaction_id, p_store_code));
    END IF;
    SELECT max(purchase_time) INTO v_last_paid FROM ledger.payments
     WHERE store_code = p_store_code AND lineage_id = p_original_transaction_id AND purchase_time <= p_time
       AND user_id = l.user_id;
    SELECT changed_at, auto_renewing INTO c FROM ledger.auto_renew_changes
     WHERE store_code = p_store_code AND original_transaction_id = p_original_transaction_id
       AND changed_at <= p_time AND user_id = l.user_id
     ORDER BY changed_at DESC, position DESC LIMIT 1;
    IF FOUND AND NOT c.auto_renewing AND (v_last_paid IS NULL OR c.changed_at >= v_last_paid) THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    v_pos := ledger.append('lineage:' || p_store_code || ':' || p_original_transaction_id, 'AutoRenewCancelled',
                           jsonb_build_object('storeCode', p_store_code,
                                              'originalTransactionId', p_original_transaction_id,
                                              'userId', l.user_id), p_time);
    PERFORM ledger.project_positions(ARRAY[v_pos], l.user_id);
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.cancel(text, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.cancel(text, text, timestamptz) TO ledger_writer;
