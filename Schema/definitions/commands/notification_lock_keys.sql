-- The keys of a verified store notification (n: what ledger.notify takes): its id; then, when it
-- has an effect of its own, what parking and releasing it hold: the account link, the payment,
-- its store transaction and lineage (an App Store notification names them), the Google token.
-- A payment the Play Developer API described ('learnedPayment') belongs to the lineage of the
-- token's latest subscription payment (ledger.token_payment, as ledger.apply_notification reads
-- it), read here before any lock is taken, so that every key is taken in the one order; a new
-- token's lineage is the one the answer names. A Google notification that carries its payment
-- ('payment') locks that payment's keys.
CREATE OR REPLACE FUNCTION ledger.notification_lock_keys(n jsonb) RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_store text := n->>'storeCode';
    v_lineage text;
BEGIN
    IF n->>'effect' IN ('ignored', 'ask') THEN
        RETURN ARRAY['notification:' || v_store || ':' || (n->>'notificationId')];
    ELSIF v_store = 'AS' THEN
        RETURN ARRAY['notification:AS:' || (n->>'notificationId'),
                     'account:AS:' || (n->>'appAccountToken'),
                     'payment:' || (n->>'transactionId'),
                     'transaction:AS:' || (n->>'transactionId'),
                     'lineage:AS:' || ledger.lineage_id(n->>'originalTransactionId', n->>'transactionId')];
    ELSIF n->>'effect' = 'learnedPayment' THEN
        -- The writers' gate (ledger.writers_gate) before the tables read here, as before any
        -- table a command reads.
        PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
        -- The token's registry shard, read here before the command's keys are known.
        IF ledger.commands_on_workers() THEN
            PERFORM ledger.lock_shard_placements(NULL, ARRAY['token:' || (n->>'purchaseTokenSha256')]);
        END IF;
        SELECT t.lineage_id INTO v_lineage FROM ledger.token_payment(decode(n->>'purchaseTokenSha256', 'hex'), true) AS t;
        RETURN ARRAY['notification:GG:' || (n->>'notificationId'),
                     'account:GG:' || (n->>'appAccountToken'),
                     'payment:' || (n->'payment'->>'transactionId'),
                     'transaction:GG:' || (n->'payment'->>'transactionId'),
                     'lineage:GG:' || coalesce(v_lineage, n->>'originalTransactionId'),
                     'token:' || (n->>'purchaseTokenSha256')];
    ELSIF n->>'effect' = 'payment' THEN
        RETURN ARRAY['notification:' || v_store || ':' || (n->>'notificationId')] || ledger.payment_lock_keys(n->'payment');
    ELSE
        RETURN ARRAY['notification:' || v_store || ':' || (n->>'notificationId'), 'token:' || (n->>'purchaseTokenSha256')];
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.notification_lock_keys(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.notification_lock_keys(jsonb) TO ledger_writer;
