-- The sweep of parked notifications (Ledger.releaseOwnedParked): releases the first notification
-- parked after position p_after (in the order of positions; appended at or after p_since, or at
-- any time when null) whose owner the ledger knows now, with the notifications its keys name, as
-- the command that made its owner known would have. Returns its position and how many were
-- released, or nothing when no parked notification after p_after has a known owner.
--
-- The command that records a payment releases what is parked about it, under the keys' locks it
-- shares with the notification. On one server that is enough. On a cluster whose commands run on
-- the workers, the keys' locks are rows on the nodes of the keys, and a 2PC commits on each node
-- in its own time: a payment's line can take a key's lock after the notification's commit on
-- that key's node and read the parked notifications (on the node of '') before it commits there.
-- The line then records the payment and leaves the notification parked. The sweep finds it: its
-- owner is known. One notification a call, so that each call takes its keys in the one order.
--
-- The parked rows drive the scan (their partial index), each event read by its key (the LIMIT
-- keeps the planner from joining the whole log): a sweep of a ledger holding 20,000 parked
-- notifications, none of them recent, reads them and their events and nothing else.
CREATE OR REPLACE FUNCTION ledger.release_owned_parked(p_after bigint, p_since timestamptz,
                                                       OUT notification_position bigint, OUT released integer)
RETURNS record
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    w record;
BEGIN
    -- The writers' gate (ledger.writers_gate) before the tables read here, as before any table a
    -- command reads.
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    FOR w IN
        SELECT n.position, n.store_code, n.lineage_key, n.transaction_key, n.account_key, n.token_key, e.data
          FROM ledger.notifications n
         CROSS JOIN LATERAL (SELECT e.data, e.recorded_at FROM ledger.events e
                              WHERE e.user_id = '' AND e.position = n.position LIMIT 1) AS e
         WHERE n.user_id = '' AND n.parked AND n.position > p_after
           AND (p_since IS NULL OR e.recorded_at >= p_since)
         ORDER BY n.position
    LOOP
        CONTINUE WHEN ledger.notification_owner(w.data) IS NULL;
        PERFORM ledger.lock_keys(ledger.notification_lock_keys(w.data));
        notification_position := w.position;
        released := ledger.release_parked(w.store_code, w.lineage_key, w.transaction_key, w.account_key, w.token_key);
        RETURN;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION ledger.release_owned_parked(bigint, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.release_owned_parked(bigint, timestamptz) TO ledger_store;
