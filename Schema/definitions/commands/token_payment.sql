-- The latest Google payment holding a purchase token (by purchase time, then paymentSeq), among
-- the rows of the owner token_keys names for the token; with p_subscription, the latest that
-- belongs to a lineage. No row when the ledger holds no such payment. The one definition the
-- notifications' lock keys (ledger.notification_lock_keys) and their application
-- (ledger.apply_notification) share, so that a notification locks the lineage it applies to.
CREATE OR REPLACE FUNCTION ledger.token_payment(p_token bytea, p_subscription boolean,
                                                OUT payment_seq text, OUT lineage_id text, OUT user_id text,
                                                OUT product_type text, OUT price numeric, OUT currency text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_owner text;
BEGIN
    -- Two statements, the registry's and the owner's: on a cluster they live on different nodes.
    SELECT k.user_id INTO v_owner FROM ledger.token_keys k WHERE k.token_sha256 = p_token;
    IF v_owner IS NULL THEN
        RETURN;
    END IF;
    SELECT p.payment_seq, p.lineage_id, p.user_id, p.product_type, p.price, p.currency
      INTO payment_seq, lineage_id, user_id, product_type, price, currency
      FROM ledger.payments p
     WHERE p.user_id = v_owner AND p.token_sha256 = p_token AND p.store_code = 'GG'
       AND (p.lineage_id IS NOT NULL OR NOT p_subscription)
     ORDER BY p.purchase_time DESC, p.payment_seq DESC
     LIMIT 1;
END
$$;
REVOKE ALL ON FUNCTION ledger.token_payment(bytea, boolean) FROM PUBLIC;
