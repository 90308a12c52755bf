-- Releases the parked notification at a position to its owner, when the ledger knows the owner
-- now: its stream and its row move from '' to the user, a NotificationReleased is appended there,
-- and the notification applies. True when it was released.
--
-- The parked row is locked first and read again (FOR UPDATE), so that a command releasing it at
-- the same time makes this one wait and then skip it: on a cluster whose commands run on the
-- workers, both can hold the keys' locks in turn while the first one's delete of the row is still
-- to commit on the node of '' (the two nodes of a 2PC commit one after the other). It is marked
-- released before it applies, so that a payment it records (which releases in turn) never
-- applies it twice.
CREATE OR REPLACE FUNCTION ledger.release_notification(p_position bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    v_store   text;
    v_id      text;
    v_data    jsonb;
    v_owner   text;
    v_pos     bigint;
    v_stream  text;
    v_version integer;
    v_head    bytea;
    r         ledger.command_result;
    v_now     timestamptz := now();
BEGIN
    SELECT n.store_code, n.notification_id INTO v_store, v_id
      FROM ledger.notifications n
     WHERE n.user_id = '' AND n.position = p_position AND n.parked
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    SELECT e.data INTO v_data FROM ledger.events e WHERE e.user_id = '' AND e.position = p_position;
    v_owner := ledger.notification_owner(v_data);
    IF v_owner IS NULL THEN
        RETURN false;
    END IF;
    v_stream := 'notification:' || v_store || ':' || v_id;
    -- The notification's stream moves to its owner: its row leaves the owner of facts without
    -- one ('') for the user's, where the release and anything after it are appended. A delete
    -- and an insert, since a distributed table's rows do not change their key.
    DELETE FROM ledger.streams WHERE user_id = '' AND stream = v_stream
    RETURNING version, head_hash INTO v_version, v_head;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'parked notification % of store % has no ownerless stream to release', v_id, v_store;
    END IF;
    INSERT INTO ledger.streams (stream, version, head_hash, user_id) VALUES (v_stream, v_version, v_head, v_owner);
    v_pos := ledger.append(v_stream, 'NotificationReleased',
                           jsonb_build_object('storeCode', v_store, 'notificationId', v_id, 'userId', v_owner), now());
    PERFORM ledger.project_positions(ARRAY[v_pos], v_owner);
    r := ledger.apply_notification(v_data, v_owner);
    -- The jobs that waited for it (the acknowledgement of the payment it describes): due now
    -- that the payment is recorded, failed for good when it was refused. The time is a variable
    -- (a parameter), since Citus refuses now() inside a CASE of a modification (postpone_job.sql).
    IF v_store = 'GG' THEN
        UPDATE ledger.jobs
           SET state = CASE WHEN r.status = 'rejected' THEN 'failed' ELSE 'pending' END,
               run_after = v_now,
               finished_at = CASE WHEN r.status = 'rejected' THEN v_now END,
               secret = CASE WHEN r.status = 'rejected' THEN NULL ELSE secret END,
               last_code = CASE WHEN r.status = 'rejected' THEN r.code END,
               last_error = CASE WHEN r.status = 'rejected'
                                 THEN 'the notification it waited for was refused: ' || r.message END
         WHERE state = 'waiting' AND args->>'waitsFor' = v_id;
    END IF;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION ledger.release_notification(bigint) FROM PUBLIC;
