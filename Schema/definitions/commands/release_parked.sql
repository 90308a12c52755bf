-- Applies, in the store's order, the parked notifications that one of the keys names and whose
-- owner is known now. Each is marked released before it applies, so that a payment it records
-- (which releases in turn) never applies it twice. A parked notification is the owner of facts
-- without one's (''), and every read of them names that owner.
CREATE OR REPLACE FUNCTION ledger.release_parked(p_store text, p_lineage text, p_transaction text, p_account text, p_token bytea)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    w       record;
    v_owner text;
    v_pos   bigint;
    v_stream  text;
    v_version integer;
    v_head    bytea;
    v_count integer := 0;
    r       ledger.command_result;
BEGIN
    FOR w IN
        SELECT n.position, n.notification_id, e.data
          FROM ledger.notifications n JOIN ledger.events e ON e.user_id = n.user_id AND e.position = n.position
         WHERE n.user_id = '' AND n.parked AND n.store_code = p_store
           AND (n.lineage_key = p_lineage OR n.transaction_key = p_transaction
                OR n.account_key = p_account OR n.token_key = p_token)
         ORDER BY n.effective_at, n.position
    LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM ledger.notifications WHERE user_id = '' AND position = w.position AND parked);
        v_owner := ledger.notification_owner(w.data);
        CONTINUE WHEN v_owner IS NULL;
        v_stream := 'notification:' || p_store || ':' || w.notification_id;
        -- The notification's stream moves to its owner: its row leaves the owner of facts without
        -- one ('') for the user's, where the release and anything after it are appended. A
        -- delete and an insert, since a distributed table's rows do not change their key.
        DELETE FROM ledger.streams WHERE user_id = '' AND stream = v_stream
        RETURNING version, head_hash INTO v_version, v_head;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'parked notification % of store % has no ownerless stream to release', w.notification_id, p_store;
        END IF;
        INSERT INTO ledger.streams (stream, version, head_hash, user_id) VALUES (v_stream, v_version, v_head, v_owner);
        v_pos := ledger.append(v_stream, 'NotificationReleased',
                               jsonb_build_object('storeCode', p_store, 'notificationId', w.notification_id,
                                                  'userId', v_owner), now());
        PERFORM ledger.project_positions(ARRAY[v_pos], v_owner);
        r := ledger.apply_notification(w.data, v_owner);
        -- The jobs that waited for it (the acknowledgement of the payment it describes): due now
        -- that the payment is recorded, failed for good when it was refused.
        IF p_store = 'GG' THEN
            UPDATE ledger.jobs
               SET state = CASE WHEN r.status = 'rejected' THEN 'failed' ELSE 'pending' END,
                   run_after = now(),
                   finished_at = CASE WHEN r.status = 'rejected' THEN now() END,
                   secret = CASE WHEN r.status = 'rejected' THEN NULL ELSE secret END,
                   last_code = CASE WHEN r.status = 'rejected' THEN r.code END,
                   last_error = CASE WHEN r.status = 'rejected'
                                     THEN 'the notification it waited for was refused: ' || r.message END
             WHERE state = 'waiting' AND args->>'waitsFor' = w.notification_id;
        END IF;
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END
$$;
REVOKE ALL ON FUNCTION ledger.release_parked(text, text, text, text, bytea) FROM PUBLIC;
