-- A verified store notification (CONTRACT.md §5): a duplicate by its id; else applied when its
-- owner is known, parked when not, ignored when it has no effect; always kept as an event.
CREATE OR REPLACE FUNCTION ledger.notify(n jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_store   text := n->>'storeCode';
    v_id      text := n->>'notificationId';
    v_owner   text;
    v_outcome text;
    r         ledger.command_result;
    v_pos     bigint;
BEGIN
    IF coalesce(v_store, '') NOT IN ('AS', 'GG') OR coalesce(v_id, '') = '' OR n->>'effect' IS NULL
       OR n->>'effectiveAt' IS NULL THEN
        RETURN ledger.rejected('INVALID_INPUT', 'notification: storeCode, notificationId, effect and effectiveAt are required');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('notification:' || v_store || ':' || v_id, 0));
    IF EXISTS (SELECT FROM ledger.notifications WHERE store_code = v_store AND notification_id = v_id) THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    IF n->>'effect' = 'ignored' THEN
        v_outcome := 'ignored';
        r := ROW('ignored', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    ELSE
        -- Parking and releasing hold the locks of what they wait for, in the order the other
        -- commands take them: account link; payment, store transaction, lineage; Google token.
        IF v_store = 'AS' THEN
            IF n->>'appAccountToken' IS NOT NULL THEN
                PERFORM pg_advisory_xact_lock(hashtextextended('account:AS:' || (n->>'appAccountToken'), 0));
            END IF;
            PERFORM pg_advisory_xact_lock(hashtextextended('payment:' || (n->>'transactionId'), 0)),
                    pg_advisory_xact_lock(hashtextextended('transaction:AS:' || (n->>'transactionId'), 0)),
                    pg_advisory_xact_lock(hashtextextended('lineage:AS:'
                        || coalesce(n->>'originalTransactionId', n->>'transactionId'), 0));
        ELSIF n->>'effect' <> 'payment' AND n->>'purchaseTokenSha256' IS NOT NULL THEN
            PERFORM pg_advisory_xact_lock(hashtextextended('token:' || (n->>'purchaseTokenSha256'), 0));
        END IF;
        v_owner := ledger.notification_owner(n);
        IF v_owner IS NULL THEN
            v_outcome := 'parked';
            r := ROW('parked', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
        ELSE
            r := ledger.apply_notification(n, v_owner);
            IF r.status = 'rejected' THEN
                RETURN r;
            END IF;
            v_outcome := 'applied';
        END IF;
    END IF;
    v_pos := ledger.append('notification:' || v_store || ':' || v_id, 'NotificationReceived',
                           n || jsonb_build_object('outcome', v_outcome), (n->>'effectiveAt')::timestamptz, 0);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN r;
END
$$;
REVOKE ALL ON FUNCTION ledger.notify(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.notify(jsonb) TO ledger_writer;
