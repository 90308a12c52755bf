-- A verified store notification (docs/contract.md §5): a duplicate by its id; else applied when its
-- owner is known, parked when not, ignored when it has no effect; always kept as an event, owned
-- (ledger.events.user_id) by the user it was applied to, or asked about, when the ledger knows them.
-- Effect 'ask' (§6.3: a Google notification that only the Play Developer API can explain) is
-- recorded with its job (n->'job': {kind, purpose, args, secret}), which is never kept in the
-- event: its secret is the purchase token. The job's answer comes back here as a notification
-- of its own, effect 'learnedPayment' (ledger.finish_job). A notification with an effect of its
-- own may bring a job too (Google's RESTARTED: auto-renew back on, and the payment asked): the
-- effect applies or is parked as any other, and the notification is recorded with its job.
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
    v_job     jsonb := n->'job';
BEGIN
    n := n - 'job';
    IF coalesce(v_store, '') NOT IN ('AS', 'GG') OR coalesce(v_id, '') = '' OR n->>'effect' IS NULL
       OR n->>'effectiveAt' IS NULL THEN
        RETURN ledger.rejected('INVALID_INPUT', 'notification: storeCode, notificationId, effect and effectiveAt are required');
    END IF;
    -- Its keys, all at once in the one order (ledger.notification_lock_keys: the id; for an
    -- effect, what parking and releasing it hold).
    PERFORM ledger.lock_keys(ledger.notification_lock_keys(n));
    -- Known already: its id is in the notifications' key registry, whoever owns it now.
    IF EXISTS (SELECT FROM ledger.notification_keys WHERE store_code = v_store AND notification_id = v_id) THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    IF n->>'effect' = 'ignored' THEN
        v_outcome := 'ignored';
        r := ROW('ignored', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    ELSIF n->>'effect' = 'ask' THEN
        IF v_job->>'kind' IS NULL OR v_job->>'purpose' IS NULL THEN
            RETURN ledger.rejected('INVALID_INPUT', 'notification: an ask needs its job');
        END IF;
        v_outcome := 'asked';
        -- Its owner when its token is known already: the history shows the question with the
        -- user's payments before the store answers it.
        v_owner := ledger.notification_owner(n);
        r := ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    ELSE
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
                           n || jsonb_build_object('outcome', v_outcome), (n->>'effectiveAt')::timestamptz, 0,
                           coalesce(v_owner, ''));
    PERFORM ledger.project_positions(ARRAY[v_pos], coalesce(v_owner, ''));
    IF v_job IS NOT NULL AND v_outcome IN ('asked', 'applied', 'parked') THEN
        PERFORM ledger.add_job(v_job - 'secret', v_job->>'secret', v_pos);
        IF v_outcome = 'parked' THEN
            r := ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
        END IF;
    END IF;
    RETURN r;
END
$$;
-- Only the role of the process that verifies the stores' signatures (0004_store_role.sql): a
-- ledger_writer login could otherwise state what only a store may (a refund undone, a tokenless
-- payment, an extension). Revoked from ledger_writer by name too, for a database whose grant gave it.
REVOKE ALL ON FUNCTION ledger.notify(jsonb) FROM PUBLIC, ledger_writer;
GRANT EXECUTE ON FUNCTION ledger.notify(jsonb) TO ledger_store;
