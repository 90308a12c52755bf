-- Applies a notification whose owner is known. Writes nothing when it refuses. Each payment or
-- lineage it is about is found by its key's owner, asked of the key's registry (through
-- ledger.payment_found for a store transaction, ledger.token_payment for a Google token,
-- ledger.lineage_found for a lineage), among that owner's rows.
CREATE OR REPLACE FUNCTION ledger.apply_notification(n jsonb, p_owner text)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    v_store    text := n->>'storeCode';
    v_effect   text := n->>'effect';
    v_at       timestamptz := (n->>'effectiveAt')::timestamptz;
    v_lineage  text := n->>'originalTransactionId';
    v_seq      text;
    v_holder   text;       -- the owner of the payment v_seq
    v_recorded boolean := false;
    v_type     text;
    d          jsonb;
    r          ledger.command_result;
    v_pos      bigint;
    v_state    text;
    v_price    numeric;
    v_currency text;
BEGIN
    -- The payment the notification is about; an App Store transaction not yet in the ledger is
    -- recorded first (the store signed it: it is a payment).
    IF v_store = 'AS' THEN
        SELECT f.payment_seq, f.user_id INTO v_seq, v_holder FROM ledger.payment_found(NULL, 'AS', n->>'transactionId') AS f;
        IF v_seq IS NULL AND n ? 'payment' THEN
            -- Its type: the lineage's, else the product's, else a subscription's. Two assignments:
            -- the lookup is not part of the statement reading products, which on a Citus cluster
            -- is a reference table and its statement may run on a worker whole.
            IF n->>'storeProductType' = 'consumable' THEN
                v_type := 'CONSUMABLE';
            ELSE
                v_type := (ledger.lineage_found('AS', v_lineage)).product_type;
                v_type := coalesce(v_type,
                    (SELECT product_type FROM ledger.products WHERE store_code = 'AS' AND product_id = n->'payment'->>'productId'),
                    'AUTO_RENEWABLE');
            END IF;
            d := n->'payment' || jsonb_build_object('userId', p_owner, 'productType', v_type,
                                                    'paymentSeq', n->>'transactionId');
            r := ledger.record_payment_core(
                CASE WHEN v_type <> 'CONSUMABLE' AND n->>'transactionId' <> coalesce(v_lineage, n->>'transactionId')
                     THEN 'renewal' ELSE 'purchase' END, d, true);
            IF r.status = 'rejected' THEN
                RETURN r;
            END IF;
            v_seq := r.payment_seq;
            v_holder := p_owner;
            v_recorded := r.status = 'recorded';
        END IF;
    ELSIF v_effect = 'learnedPayment' THEN
        -- A payment the Play Developer API described (docs/contract.md §6.3). One the ledger holds
        -- already, whichever channel brought it first, is a duplicate: the first record stands.
        d := n->'payment';
        SELECT f.payment_seq INTO v_seq FROM ledger.payment_found(NULL, 'GG', d->>'transactionId') AS f;
        IF v_seq IS NOT NULL THEN
            RETURN ROW('duplicate', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
        END IF;
        -- The lineage holding the token, with its type and latest price; else a new lineage
        -- named by the order id without its renewal suffix (n->>'originalTransactionId').
        SELECT t.lineage_id, t.product_type, t.price, t.currency INTO v_lineage, v_type, v_price, v_currency
          FROM ledger.token_payment(decode(n->>'purchaseTokenSha256', 'hex'), true) AS t;
        IF n->>'storeProductType' = 'consumable' THEN
            v_type := 'CONSUMABLE';
            SELECT price, currency INTO v_price, v_currency FROM ledger.products
             WHERE store_code = 'GG' AND product_id = d->>'productId';
        ELSE
            v_type := coalesce(v_type,
                (SELECT product_type FROM ledger.products WHERE store_code = 'GG' AND product_id = d->>'productId'),
                'AUTO_RENEWABLE');
            v_lineage := coalesce(v_lineage, n->>'originalTransactionId');
        END IF;
        IF d->>'price' IS NULL THEN
            IF v_price IS NULL THEN
                RETURN ledger.rejected('PRODUCT_INVALID', format(
                    'product %s: the store''s answer has no price, and no product line declared one', d->>'productId'));
            END IF;
            d := d || jsonb_build_object('price', v_price::text, 'currency', v_currency);
        END IF;
        d := d || jsonb_build_object('userId', p_owner, 'productType', v_type, 'paymentSeq', d->>'transactionId')
               || CASE WHEN v_type <> 'CONSUMABLE' THEN jsonb_build_object('originalTransactionId', v_lineage) ELSE '{}' END;
        RETURN ledger.record_payment_core(
            CASE WHEN v_type <> 'CONSUMABLE' AND d->>'transactionId' <> v_lineage THEN 'renewal' ELSE 'purchase' END, d, true);
    ELSIF v_effect = 'payment' THEN
        RETURN ledger.record_payment_core(CASE WHEN n->'payment'->>'transactionId'
                                                    = ledger.lineage_id(n->'payment'->>'originalTransactionId', n->'payment'->>'transactionId')
                                               THEN 'purchase' ELSE 'renewal' END, n->'payment', false);
    ELSIF n->>'orderId' IS NOT NULL THEN
        -- Google's voided purchase: the payment (GG, orderId) and no other (notification_owner
        -- parks it until that order is recorded).
        SELECT f.payment_seq, f.lineage_id, f.user_id INTO v_seq, v_lineage, v_holder
          FROM ledger.payment_found(NULL, 'GG', n->>'orderId') AS f;
    ELSE
        -- A subscription notification: the lineage whose payment holds its token; REVOKED
        -- refunds that lineage's latest payment, whichever token it holds.
        SELECT t.payment_seq, t.lineage_id, t.user_id INTO v_seq, v_lineage, v_holder
          FROM ledger.token_payment(decode(n->>'purchaseTokenSha256', 'hex'), false) AS t;
        IF v_effect = 'revokeLatest' AND v_lineage IS NOT NULL THEN
            SELECT payment_seq INTO v_seq FROM ledger.payments
             WHERE store_code = 'GG' AND lineage_id = v_lineage AND user_id = v_holder
             ORDER BY purchase_time DESC, payment_seq DESC LIMIT 1;
        END IF;
    END IF;

    IF v_effect = 'consumptionRequest' THEN
        -- Apple asks whether a refunded item was delivered (§6.4): a job answers it from the
        -- payment's facts when it runs, within 12 hours of the request's signedDate.
        PERFORM ledger.add_job(jsonb_build_object(
            'kind', 'apple.consumption', 'purpose', 'apple.consumption:' || (n->>'notificationId'),
            'args', jsonb_build_object('notificationId', n->>'notificationId', 'transactionId', n->>'transactionId',
                                       'signedDate', n->>'effectiveAt', 'environment', n->>'environment',
                                       'bundleId', n->>'bundleId')),
            NULL, NULL);
        RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF v_effect = 'payment' THEN
        RETURN ROW(CASE WHEN v_recorded THEN 'recorded' ELSE 'duplicate' END, NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF v_effect IN ('refund', 'revoke', 'revokeLatest') THEN
        IF v_seq IS NULL THEN
            RETURN ledger.rejected('NOT_FOUND', format('no payment for transaction %s', coalesce(n->>'transactionId', n->>'orderId')));
        END IF;
        r := ledger.refund(v_seq, coalesce((n->>'refundAt')::timestamptz, v_at),
                           coalesce(n->>'reason', CASE v_effect WHEN 'refund' THEN 'refund' ELSE 'revoked' END));
        RETURN r;
    ELSIF v_effect = 'refundReversed' THEN
        IF v_seq IS NULL OR NOT EXISTS (SELECT FROM ledger.payments
                                         WHERE payment_seq = v_seq AND user_id = v_holder AND refunded_at IS NOT NULL) THEN
            RETURN ROW('duplicate', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
        END IF;
        v_pos := ledger.append('payment:' || v_seq, 'RefundReversed',
                               jsonb_build_object('paymentSeq', v_seq, 'userId', p_owner), v_at);
        PERFORM ledger.project_positions(ARRAY[v_pos], p_owner);
        RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF v_effect = 'extend' THEN
        IF v_seq IS NULL OR n->>'expiryTime' IS NULL THEN
            RETURN ledger.rejected('NOT_FOUND', format('no payment for transaction %s', n->>'transactionId'));
        END IF;
        v_pos := ledger.append('payment:' || v_seq, 'ExpiryExtended',
                               jsonb_build_object('paymentSeq', v_seq, 'userId', p_owner,
                                                  'expiryTime', n->>'expiryTime'), v_at);
        PERFORM ledger.project_positions(ARRAY[v_pos], p_owner);
        RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    END IF;

    -- The rest changes the lineage.
    IF (ledger.lineage_found(v_store, v_lineage)).user_id IS NULL THEN
        RETURN ledger.rejected('NOT_FOUND', format('no subscription %s on store %s', coalesce(v_lineage, '(none)'), v_store));
    END IF;
    IF v_effect IN ('autoRenewOff', 'autoRenewOn') THEN
        v_pos := ledger.append('lineage:' || v_store || ':' || v_lineage,
                               CASE v_effect WHEN 'autoRenewOff' THEN 'AutoRenewCancelled' ELSE 'AutoRenewEnabled' END,
                               jsonb_build_object('storeCode', v_store, 'originalTransactionId', v_lineage,
                                                  'userId', p_owner, 'notificationId', n->>'notificationId'), v_at);
    ELSE
        v_state := CASE v_effect WHEN 'billingEnded' THEN 'none' ELSE v_effect END;
        IF v_state NOT IN ('inGracePeriod', 'billingRetry', 'onHold', 'paused', 'none') THEN
            RETURN ledger.rejected('INVALID_INPUT', format('effect: unknown effect %s', v_effect));
        END IF;
        v_pos := ledger.append('lineage:' || v_store || ':' || v_lineage, 'BillingStateChanged',
                               jsonb_strip_nulls(jsonb_build_object('storeCode', v_store, 'originalTransactionId', v_lineage,
                                   'userId', p_owner, 'state', v_state,
                                   'gracePeriodExpiresAt', n->>'gracePeriodExpiresAt',
                                   'notificationId', n->>'notificationId')), v_at);
    END IF;
    PERFORM ledger.project_positions(ARRAY[v_pos], p_owner);
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.apply_notification(jsonb, text) FROM PUBLIC;
