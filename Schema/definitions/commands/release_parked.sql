-- Applies, in the store's order, the parked notifications that one of the keys names and whose
-- owner is known now. Each is marked released before it applies, so that a payment it records
-- (which releases in turn) never applies it twice.
CREATE OR REPLACE FUNCTION ledger.release_parked(p_store text, p_lineage text, p_transaction text, p_account text, p_token bytea)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    w       record;
    v_owner text;
    v_pos   bigint;
    v_count integer := 0;
BEGIN
    FOR w IN
        SELECT n.position, n.notification_id, e.data
          FROM ledger.notifications n JOIN ledger.events e ON e.position = n.position
         WHERE n.parked AND n.store_code = p_store
           AND (n.lineage_key = p_lineage OR n.transaction_key = p_transaction
                OR n.account_key = p_account OR n.token_key = p_token)
         ORDER BY n.effective_at, n.position
    LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM ledger.notifications WHERE position = w.position AND parked);
        v_owner := ledger.notification_owner(w.data);
        CONTINUE WHEN v_owner IS NULL;
        v_pos := ledger.append('notification:' || p_store || ':' || w.notification_id, 'NotificationReleased',
                               jsonb_build_object('storeCode', p_store, 'notificationId', w.notification_id,
                                                  'userId', v_owner), now());
        PERFORM ledger.project_positions(ARRAY[v_pos]);
        PERFORM ledger.apply_notification(w.data, v_owner);
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END
$$;
REVOKE ALL ON FUNCTION ledger.release_parked(text, text, text, text, bytea) FROM PUBLIC;
