-- The write side: one function per contract command. Each one checks, appends its event and
-- applies it to the projections in the caller's transaction, in one round trip. A refusal
-- returns status 'rejected' and writes nothing. Races are settled by transaction-scoped
-- advisory locks on the names a command claims (payment, store transaction, lineage) and by
-- row locks, with the unique constraints behind them: never by a check that another writer
-- can slip past. Input shapes were validated by the library (Sources/PurchaseLedger).

CREATE TYPE ledger.command_result AS (
    status      text,        -- recorded | duplicate | consumed | alreadyConsumed | restored | rejected
    code        text,        -- the contract's error code when rejected
    message     text,
    payment_seq text,
    consumed_at timestamptz,
    recorded    text[],
    payments    text[]
);

CREATE FUNCTION ledger.rejected(p_code text, p_message text, p_payment_seq text DEFAULT NULL)
RETURNS ledger.command_result
LANGUAGE sql IMMUTABLE
RETURN ROW('rejected', p_code, p_message, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;

-- Compares two digests without stopping at the first differing byte; false (never null) for
-- a missing or empty digest.
CREATE FUNCTION ledger.digest_equal(a bytea, b bytea) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(length(a) = length(b) AND length(a) > 0
   AND (SELECT bit_or(get_byte(a, i) # get_byte(b, i)) FROM generate_series(0, length(a) - 1) AS i) = 0, false);

-- The first field in which a payment event differs from the recorded payment, or null.
-- (Projection tables are only ever named inside string bodies, which resolve names when they
-- run: a rebuild swaps the tables, and a parsed body would keep pointing at the old ones.)
CREATE FUNCTION ledger.payment_difference(p_seq text, d jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
SELECT CASE
    WHEN p.store_code IS DISTINCT FROM d->>'storeCode' THEN 'storeCode'
    WHEN p.product_type IS DISTINCT FROM d->>'productType' THEN 'productType'
    WHEN p.price IS DISTINCT FROM (d->>'price')::numeric THEN 'price'
    WHEN p.currency IS DISTINCT FROM d->>'currency' THEN 'currency'
    WHEN p.transaction_id IS DISTINCT FROM d->>'transactionId' THEN 'transactionId'
    WHEN coalesce(p.original_transaction_id, p.transaction_id)
         IS DISTINCT FROM coalesce(d->>'originalTransactionId', d->>'transactionId') THEN 'originalTransactionId'
    WHEN p.purchase_time IS DISTINCT FROM (d->>'purchaseTime')::timestamptz THEN 'purchaseTime'
    WHEN p.expiry_time IS DISTINCT FROM (d->>'expiryTime')::timestamptz THEN 'expiryTime'
    WHEN p.payload IS DISTINCT FROM ledger.payload_bytes(d) THEN 'payload'
    WHEN p.sandbox_payment IS DISTINCT FROM (d->>'sandboxPayment')::boolean THEN 'sandboxPayment'
    WHEN p.promotion_payment IS DISTINCT FROM (d->>'promotionPayment')::boolean THEN 'promotionPayment'
    WHEN p.product_seq IS DISTINCT FROM (d->>'productSeq')::bigint THEN 'productSeq'
    WHEN NOT ledger.digest_equal(p.token_sha256, decode(d->>'purchaseTokenSha256', 'hex')) THEN 'purchaseToken'
END
FROM ledger.payments p WHERE p.payment_seq = p_seq
$$;

-- Records a purchase or a renewal (p_kind 'purchase' | 'renewal'); d is the event's data.
CREATE FUNCTION ledger.record_payment_in_tx(p_kind text, d jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    v_seq     text := d->>'paymentSeq';
    v_store   text := d->>'storeCode';
    v_txid    text := d->>'transactionId';
    v_type    text := d->>'productType';
    v_lineage text := CASE WHEN d->>'productType' <> 'CONSUMABLE'
                           THEN coalesce(d->>'originalTransactionId', d->>'transactionId') END;
    p         record;
    l         record;
    v_field   text;
    v_pos     bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('payment:' || v_seq, 0)),
            pg_advisory_xact_lock(hashtextextended('transaction:' || v_store || ':' || v_txid, 0)),
            pg_advisory_xact_lock(hashtextextended('lineage:' || v_store || ':' || coalesce(v_lineage, v_txid), 0));

    -- The payment by its name, else another payment holding the same store transaction.
    SELECT payment_seq, user_id, product_id INTO p FROM ledger.payments
     WHERE payment_seq = v_seq OR (store_code = v_store AND transaction_id = v_txid)
     ORDER BY payment_seq = v_seq DESC LIMIT 1;
    IF FOUND AND p.payment_seq <> v_seq THEN
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
    RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
END
$$;

CREATE FUNCTION ledger.record_payment(p_kind text, d jsonb)
RETURNS ledger.command_result
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
RETURN ledger.record_payment_in_tx(p_kind, d);

-- Consumes a payment: hands its goods out exactly once. The payment's row lock makes
-- concurrent consumes of one payment wait for each other; the first one wins.
CREATE FUNCTION ledger.consume(p_payment_seq text, p_user_id text, p_token_sha256 bytea, p_time timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p     record;
    v_pos bigint;
BEGIN
    SELECT user_id, token_sha256, product_type, consumed_at, refunded_at INTO p
      FROM ledger.payments WHERE payment_seq = p_payment_seq FOR UPDATE;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND', format('no payment %s', p_payment_seq), p_payment_seq);
    ELSIF p.user_id IS DISTINCT FROM p_user_id THEN
        RETURN ledger.rejected('USER_INVALID', format('payment %s belongs to another user', p_payment_seq), p_payment_seq);
    ELSIF NOT ledger.digest_equal(p.token_sha256, p_token_sha256) THEN
        RETURN ledger.rejected('TOKEN_INVALID',
            format('the purchase token does not match payment %s', p_payment_seq), p_payment_seq);
    ELSIF p.product_type = 'AUTO_RENEWABLE' THEN
        RETURN ledger.rejected('NOT_CONSUMABLE',
            format('payment %s is an AUTO_RENEWABLE subscription, which is not consumed', p_payment_seq), p_payment_seq);
    ELSIF p.consumed_at IS NOT NULL THEN
        RETURN ROW('alreadyConsumed', NULL, NULL, p_payment_seq, p.consumed_at, NULL, NULL)::ledger.command_result;
    ELSIF p.refunded_at IS NOT NULL THEN
        RETURN ledger.rejected('REFUNDED',
            format('payment %s was refunded at %s and was never consumed', p_payment_seq,
                   to_char(p.refunded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), p_payment_seq);
    END IF;
    v_pos := ledger.append('payment:' || p_payment_seq, 'PaymentConsumed',
                           jsonb_build_object('paymentSeq', p_payment_seq, 'userId', p_user_id), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('consumed', NULL, NULL, p_payment_seq, p_time, NULL, NULL)::ledger.command_result;
END
$$;

-- Records a refund (App Store refund or revocation, Google Play voided purchase).
CREATE FUNCTION ledger.refund(p_payment_seq text, p_time timestamptz, p_reason text)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p     record;
    v_pos bigint;
BEGIN
    SELECT user_id, refunded_at INTO p FROM ledger.payments WHERE payment_seq = p_payment_seq FOR UPDATE;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND', format('no payment %s', p_payment_seq), p_payment_seq);
    ELSIF p.refunded_at IS NOT NULL THEN
        RETURN ROW('duplicate', NULL, NULL, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    v_pos := ledger.append('payment:' || p_payment_seq, 'PaymentRefunded',
                           jsonb_strip_nulls(jsonb_build_object('paymentSeq', p_payment_seq, 'userId', p.user_id,
                                                                'reason', p_reason)), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('recorded', NULL, NULL, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
END
$$;

-- Records that the user turned auto-renew off; a duplicate when it is already off at that time.
CREATE FUNCTION ledger.cancel(p_store_code text, p_original_transaction_id text, p_time timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    l             record;
    v_last_paid   timestamptz;
    v_last_cancel timestamptz;
    v_pos         bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('lineage:' || p_store_code || ':' || p_original_transaction_id, 0));
    SELECT user_id INTO l FROM ledger.lineages
     WHERE store_code = p_store_code AND original_transaction_id = p_original_transaction_id;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND',
            format('no subscription %s on store %s', p_original_transaction_id, p_store_code));
    END IF;
    SELECT max(purchase_time) INTO v_last_paid FROM ledger.payments
     WHERE store_code = p_store_code AND lineage_id = p_original_transaction_id AND purchase_time <= p_time;
    SELECT max(changed_at) INTO v_last_cancel FROM ledger.auto_renew_changes
     WHERE store_code = p_store_code AND original_transaction_id = p_original_transaction_id
       AND changed_at <= p_time AND NOT auto_renewing;
    IF v_last_cancel IS NOT NULL AND (v_last_paid IS NULL OR v_last_cancel >= v_last_paid) THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    v_pos := ledger.append('lineage:' || p_store_code || ':' || p_original_transaction_id, 'AutoRenewCancelled',
                           jsonb_build_object('storeCode', p_store_code,
                                              'originalTransactionId', p_original_transaction_id,
                                              'userId', l.user_id), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;

-- Restores a user's purchases on one store: every item is recorded as a purchase or a renewal
-- (p_items: [{"kind": "purchase"|"renewal", "data": {...}}]); one refused item refuses all.
CREATE FUNCTION ledger.restore(p_user_id text, p_store_code text, p_time timestamptz, p_items jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_item     jsonb;
    v_index    bigint;
    r          ledger.command_result;
    v_recorded text[] := '{}';
    v_code     text;
    v_message  text;
    v_pos      bigint;
BEGIN
    BEGIN
        FOR v_item, v_index IN SELECT value, ordinality FROM jsonb_array_elements(p_items) WITH ORDINALITY LOOP
            r := ledger.record_payment_in_tx(v_item->>'kind', v_item->'data');
            IF r.status = 'rejected' THEN
                RAISE EXCEPTION USING ERRCODE = 'LR001', MESSAGE = r.code,
                      DETAIL = format('purchases[%s]: %s', v_index - 1, r.message);
            ELSIF r.status = 'recorded' THEN
                v_recorded := v_recorded || r.payment_seq;
            END IF;
        END LOOP;
    EXCEPTION WHEN SQLSTATE 'LR001' THEN
        GET STACKED DIAGNOSTICS v_code = MESSAGE_TEXT, v_message = PG_EXCEPTION_DETAIL;
        RETURN ledger.rejected(v_code, v_message);
    END;
    v_pos := ledger.append('restore:' || p_store_code || ':' || p_user_id, 'PurchasesRestored',
                           jsonb_build_object('userId', p_user_id, 'storeCode', p_store_code,
                                              'recorded', to_jsonb(v_recorded),
                                              'items', (SELECT coalesce(jsonb_agg(i->'data'->>'paymentSeq'), '[]')
                                                          FROM jsonb_array_elements(p_items) AS i)), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('restored', NULL, NULL, NULL, NULL, v_recorded,
               ARRAY(SELECT p.payment_seq
                       FROM ledger.lineages l
                       JOIN ledger.payments p
                         ON p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
                      WHERE l.user_id = p_user_id AND l.store_code = p_store_code
                      ORDER BY p.purchase_time, p.payment_seq))::ledger.command_result;
END
$$;

REVOKE ALL ON FUNCTION ledger.record_payment_in_tx(text, jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.record_payment(text, jsonb), ledger.consume(text, text, bytea, timestamptz),
    ledger.refund(text, timestamptz, text), ledger.cancel(text, text, timestamptz),
    ledger.restore(text, text, timestamptz, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.record_payment(text, jsonb), ledger.consume(text, text, bytea, timestamptz),
    ledger.refund(text, timestamptz, text), ledger.cancel(text, text, timestamptz),
    ledger.restore(text, text, timestamptz, jsonb) TO ledger_writer;
