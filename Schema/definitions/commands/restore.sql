-- Restores a user's purchases on one store: every item is recorded as a purchase or a renewal
-- (p_items: [{"kind": "purchase"|"renewal", "data": {...}}]); one refused item refuses all.
CREATE OR REPLACE FUNCTION ledger.restore(p_user_id text, p_store_code text, p_time timestamptz, p_items jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_item     jsonb;
    v_index    bigint;
    r          ledger.command_result;
    v_recorded text[] := '{}';
    v_code     text;
    v_message  text;
    v_pos      bigint;
BEGIN
    -- Every item's keys at once, in the ledger's one lock order, before any item takes its own.
    PERFORM ledger.lock_keys(ARRAY(SELECT unnest(ledger.payment_lock_keys(item->'data'))
                                     FROM jsonb_array_elements(p_items) AS item));
    BEGIN
        FOR v_item, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_items) WITH ORDINALITY LOOP
            -- CONTRACT.md §2.3: every item is the restoring user's, on the restore's store.
            IF v_item->'data'->>'userId' IS DISTINCT FROM p_user_id
               OR v_item->'data'->>'storeCode' IS DISTINCT FROM p_store_code THEN
                r := ledger.rejected('INVALID_INPUT', format('%s must equal the restore''s',
                         CASE WHEN v_item->'data'->>'userId' IS DISTINCT FROM p_user_id THEN 'userId' ELSE 'storeCode' END));
            ELSE
                r := ledger.record_payment_in_tx(v_item->>'kind', v_item->'data');
            END IF;
            IF r.status = 'rejected' THEN
                RAISE EXCEPTION USING ERRCODE = 'LR001', MESSAGE = r.code,
                      DETAIL = format('purchases[%s]: %s', v_index - 1, r.message);
            ELSIF r.status = 'recorded' THEN
                v_recorded := v_recorded || r.payment_seq;
            END IF;
        END LOOP;
    EXCEPTION WHEN SQLSTATE 'LR001' THEN
        GET STACKED DIAGNOSTICS v_code = MESSAGE_TEXT, v_message = PG_EXCEPTION_DETAIL;
        RETURN ledger.rejected(v_code, v_message);
    END;
    v_pos := ledger.append('restore:' || p_store_code || ':' || p_user_id, 'PurchasesRestored',
                           jsonb_build_object('userId', p_user_id, 'storeCode', p_store_code,
                                              'recorded', to_jsonb(v_recorded),
                                              'items', (SELECT coalesce(jsonb_agg(i->'data'->>'paymentSeq'), '[]')
                                                          FROM jsonb_array_elements(p_items) AS i)), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('restored', NULL, NULL, NULL, NULL, v_recorded,
               ARRAY(SELECT p.payment_seq
                       FROM ledger.lineages l
                       JOIN ledger.payments p
                         ON p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
                      WHERE l.user_id = p_user_id AND l.store_code = p_store_code
                      ORDER BY p.purchase_time, p.payment_seq))::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.restore(text, text, timestamptz, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.restore(text, text, timestamptz, jsonb) TO ledger_writer;
