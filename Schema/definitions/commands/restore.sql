-- Restores a user's purchases on one store: every item is recorded as a purchase or a renewal
-- (p_items: [{"kind": "purchase"|"renewal", "data": {...}}]); one refused item refuses all.
-- A database made before apply_payments may hold record_payment_in_tx: dropped here.
DROP FUNCTION IF EXISTS ledger.record_payment_in_tx(text, jsonb);
CREATE OR REPLACE FUNCTION ledger.restore(p_user_id text, p_store_code text, p_time timestamptz, p_items jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_first    bigint;
    v_refused  bigint;
    v_code     text;
    v_message  text;
    v_recorded text[];
    v_pos      bigint;
    k          ledger.command;
BEGIN
    k.kind := 'restore';
    k.user_id := p_user_id;
    k.store_code := p_store_code;
    k.data := p_items;
    PERFORM ledger.lock_keys(ledger.command_lock_keys(k));
    -- docs/contract.md §2.3: every item is the restoring user's, on the restore's store. The items
    -- before the first that is not are recorded (a batch, apply_payments); the first refusal,
    -- of an item or of that one, refuses the restore, and nothing it wrote is kept.
    SELECT ordinality INTO v_first FROM jsonb_array_elements(p_items) WITH ORDINALITY AS item
     WHERE value->'data'->>'userId' IS DISTINCT FROM p_user_id OR value->'data'->>'storeCode' IS DISTINCT FROM p_store_code
     ORDER BY ordinality LIMIT 1;
    BEGIN
        SELECT array_agg(r.payment_seq ORDER BY n) FILTER (WHERE r.status = 'recorded'),
               (array_agg(n ORDER BY n) FILTER (WHERE r.status = 'rejected'))[1],
               (array_agg(r.code ORDER BY n) FILTER (WHERE r.status = 'rejected'))[1],
               (array_agg(r.message ORDER BY n) FILTER (WHERE r.status = 'rejected'))[1]
          INTO v_recorded, v_refused, v_code, v_message
          FROM ledger.apply_payments(coalesce((SELECT jsonb_agg(value ORDER BY ordinality)
                                                 FROM jsonb_array_elements(p_items) WITH ORDINALITY
                                                WHERE v_first IS NULL OR ordinality < v_first), '[]'), false)
               WITH ORDINALITY AS r(status, code, message, payment_seq, consumed_at, recorded, payments, n);
        IF v_refused IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'LR001', MESSAGE = v_code,
                  DETAIL = format('purchases[%s]: %s', v_refused - 1, v_message);
        ELSIF v_first IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'LR001', MESSAGE = 'INVALID_INPUT',
                  DETAIL = format('purchases[%s]: %s must equal the restore''s', v_first - 1,
                      CASE WHEN p_items->(v_first::integer - 1)->'data'->>'userId' IS DISTINCT FROM p_user_id THEN 'userId' ELSE 'storeCode' END);
        END IF;
    EXCEPTION WHEN SQLSTATE 'LR001' THEN
        GET STACKED DIAGNOSTICS v_code = MESSAGE_TEXT, v_message = PG_EXCEPTION_DETAIL;
        RETURN ledger.rejected(v_code, v_message);
    END;
    v_recorded := coalesce(v_recorded, '{}');
    v_pos := ledger.append('restore:' || p_store_code || ':' || p_user_id, 'PurchasesRestored',
                           jsonb_build_object('userId', p_user_id, 'storeCode', p_store_code,
                                              'recorded', to_jsonb(v_recorded),
                                              'items', (SELECT coalesce(jsonb_agg(i->'data'->>'paymentSeq'), '[]')
                                                          FROM jsonb_array_elements(p_items) AS i)), p_time);
    PERFORM ledger.project_positions(ARRAY[v_pos], p_user_id);
    RETURN ROW('restored', NULL, NULL, NULL, NULL, v_recorded,
               ARRAY(SELECT p.payment_seq
                       FROM ledger.lineages l
                       JOIN ledger.payments p
                         ON p.user_id = l.user_id AND p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
                      WHERE l.user_id = p_user_id AND l.store_code = p_store_code
                      ORDER BY p.purchase_time, p.payment_seq))::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.restore(text, text, timestamptz, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.restore(text, text, timestamptz, jsonb) TO ledger_writer;
