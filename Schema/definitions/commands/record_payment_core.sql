-- Records a purchase or a renewal (p_kind 'purchase' | 'renewal'); d is the payment command
-- (the §2.1 fields under their contract names, the token as purchaseTokenSha256), checked by
-- ledger.payment_invalid_field; the event's data is what ledger.payment_event builds from it.
-- p_from_store: the payment comes from a verified store notification (it has no purchase token,
-- and is a duplicate of any payment already recorded for its store transaction). An SDK line for
-- a payment first learned from a notification, with the same user, product and price, is a
-- duplicate that makes its paymentSeq and token name that payment too (PaymentLinked).
-- A new payment releases the parked notifications that were waiting for it.
CREATE OR REPLACE FUNCTION ledger.record_payment_core(p_kind text, d jsonb, p_from_store boolean)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    v_seq     text := d->>'paymentSeq';
    v_store   text := d->>'storeCode';
    v_txid    text := d->>'transactionId';
    v_type    text := d->>'productType';
    v_token   bytea;
    v_lineage text := CASE WHEN d->>'productType' <> 'CONSUMABLE'
                           THEN coalesce(d->>'originalTransactionId', d->>'transactionId') END;
    p         record;
    l         record;
    v_field   text;
    v_pos     bigint;
BEGIN
    -- A payment from a store notification has no token: the rules are checked with a stand-in.
    v_field := coalesce(ledger.payment_invalid_field(CASE WHEN p_from_store AND d->>'purchaseTokenSha256' IS NULL
        THEN d || jsonb_build_object('purchaseTokenSha256', repeat('0', 64)) ELSE d END),
        -- The kind, and a renewal's lineage, as the library reads a line.
        CASE WHEN p_kind IS DISTINCT FROM 'purchase' AND p_kind IS DISTINCT FROM 'renewal' THEN 'kind'
             WHEN p_kind = 'renewal' AND d->>'originalTransactionId' IS NULL THEN 'originalTransactionId' END);
    IF v_field IS NOT NULL THEN
        RETURN ledger.rejected('INVALID_INPUT',
            format('payment %s: %s is missing or invalid', coalesce(v_seq, '(no paymentSeq)'), v_field), v_seq);
    END IF;
    d := ledger.payment_event(d, p_from_store);
    v_token := decode(d->>'purchaseTokenSha256', 'hex');
    -- The payment's keys, in the ledger's one lock order (lock_keys).
    PERFORM ledger.lock_keys(ledger.payment_lock_keys(d));

    -- The payment by its name, else another payment holding the same store transaction.
    SELECT payment_seq, user_id, product_id, price, token_sha256, linked_token_sha256 INTO p
      FROM ledger.payments WHERE payment_seq = v_seq;
    IF NOT FOUND THEN
        SELECT payment_seq, user_id, product_id, price, token_sha256, linked_token_sha256 INTO p FROM ledger.payments
         WHERE store_code = v_store AND transaction_id = v_txid;
    END IF;
    IF FOUND AND p_from_store THEN
        RETURN ROW('duplicate', NULL, NULL, p.payment_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF FOUND AND p.token_sha256 IS NULL THEN
        -- First learned from a store notification.
        IF p.user_id IS DISTINCT FROM d->>'userId' THEN
            RETURN ledger.rejected('USER_INVALID', format('payment %s belongs to another user', v_seq), v_seq);
        ELSIF p.product_id IS DISTINCT FROM d->>'productId' THEN
            RETURN ledger.rejected('PRODUCT_INVALID',
                format('payment %s was recorded for product %s, not %s', v_seq, p.product_id, d->>'productId'), v_seq);
        ELSIF p.price IS DISTINCT FROM (d->>'price')::numeric THEN
            RETURN ledger.rejected('PAYMENT_CONFLICT',
                format('transaction %s of store %s was recorded from the store with price %s', v_txid, v_store, p.price), v_seq);
        ELSIF p.linked_token_sha256 IS NOT NULL AND NOT ledger.digest_equal(p.linked_token_sha256, v_token) THEN
            RETURN ledger.rejected('PAYMENT_CONFLICT',
                format('transaction %s of store %s was recorded with another purchaseToken', v_txid, v_store), v_seq);
        END IF;
        IF p.linked_token_sha256 IS NULL
           OR (v_seq <> p.payment_seq AND NOT EXISTS (SELECT FROM ledger.payment_aliases WHERE alias_seq = v_seq)) THEN
            v_pos := ledger.append('payment:' || p.payment_seq, 'PaymentLinked',
                jsonb_build_object('paymentSeq', p.payment_seq, 'userId', p.user_id,
                                   'alias', CASE WHEN v_seq <> p.payment_seq THEN v_seq END,
                                   'purchaseTokenSha256', d->>'purchaseTokenSha256'), now());
            PERFORM ledger.project_range(v_pos, v_pos);
        END IF;
        RETURN ROW('duplicate', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF FOUND AND p.payment_seq <> v_seq THEN
        RETURN ledger.rejected('PAYMENT_CONFLICT',
            format('transaction %s of store %s is already recorded as payment %s', v_txid, v_store, p.payment_seq), v_seq);
    ELSIF FOUND THEN
        IF p.user_id IS DISTINCT FROM d->>'userId' THEN
            RETURN ledger.rejected('USER_INVALID', format('payment %s belongs to another user', v_seq), v_seq);
        ELSIF p.product_id IS DISTINCT FROM d->>'productId' THEN
            RETURN ledger.rejected('PRODUCT_INVALID',
                format('payment %s was recorded for product %s, not %s', v_seq, p.product_id, d->>'productId'), v_seq);
        END IF;
        v_field := ledger.payment_difference(v_seq, d);
        IF v_field IS NOT NULL THEN
            RETURN ledger.rejected('PAYMENT_CONFLICT',
                format('payment %s was recorded with another %s', v_seq, v_field), v_seq);
        END IF;
        RETURN ROW('duplicate', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    END IF;

    IF v_lineage IS NOT NULL THEN
        SELECT user_id, product_id, product_type INTO l FROM ledger.lineages
         WHERE store_code = v_store AND original_transaction_id = v_lineage;
        IF FOUND THEN
            IF l.user_id IS DISTINCT FROM d->>'userId' THEN
                RETURN ledger.rejected('USER_INVALID',
                    format('subscription %s of store %s belongs to another user', v_lineage, v_store), v_seq);
            ELSIF l.product_id IS DISTINCT FROM d->>'productId' THEN
                RETURN ledger.rejected('PRODUCT_INVALID',
                    format('subscription %s of store %s is for product %s, not %s',
                           v_lineage, v_store, l.product_id, d->>'productId'), v_seq);
            ELSIF l.product_type IS DISTINCT FROM v_type THEN
                RETURN ledger.rejected('PRODUCT_INVALID',
                    format('subscription %s of store %s is %s, not %s', v_lineage, v_store, l.product_type, v_type), v_seq);
            END IF;
        END IF;
    END IF;

    v_pos := ledger.append('payment:' || v_seq,
                           CASE p_kind WHEN 'renewal' THEN 'RenewalRecorded' ELSE 'PurchaseRecorded' END,
                           d, (d->>'purchaseTime')::timestamptz, 0);
    PERFORM ledger.project_range(v_pos, v_pos);
    IF EXISTS (SELECT FROM ledger.notifications WHERE parked AND store_code = v_store) THEN
        PERFORM ledger.release_parked(v_store, v_lineage, v_txid, NULL, CASE WHEN v_store = 'GG' THEN v_token END);
    END IF;
    RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.record_payment_core(text, jsonb, boolean) FROM PUBLIC;
