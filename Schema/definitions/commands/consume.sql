-- Consumes a payment: hands its goods out exactly once. The payment's row lock makes concurrent
-- consumes of one payment wait for each other; the first one wins. A payment first learned from
-- a store notification has no token: its consume shows none (p_token_sha256 null).
CREATE OR REPLACE FUNCTION ledger.consume(p_payment_seq text, p_user_id text, p_token_sha256 bytea, p_time timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_seq   text := p_payment_seq;
    v_token bytea;
    p       record;
    v_pos   bigint;
BEGIN
    SELECT user_id, coalesce(token_sha256, linked_token_sha256) AS token, product_type, consumed_at, refunded_at INTO p
      FROM ledger.payments WHERE payment_seq = v_seq FOR UPDATE;
    IF NOT FOUND THEN
        v_seq := ledger.payment_named(p_payment_seq);
        SELECT user_id, coalesce(token_sha256, linked_token_sha256) AS token, product_type, consumed_at, refunded_at INTO p
          FROM ledger.payments WHERE payment_seq = v_seq FOR UPDATE;
    END IF;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND', format('no payment %s', p_payment_seq), p_payment_seq);
    ELSIF p.user_id IS DISTINCT FROM p_user_id THEN
        RETURN ledger.rejected('USER_INVALID', format('payment %s belongs to another user', p_payment_seq), p_payment_seq);
    ELSIF NOT (ledger.digest_equal(p.token, p_token_sha256) OR (p.token IS NULL AND p_token_sha256 IS NULL)) THEN
        RETURN ledger.rejected('TOKEN_INVALID',
            CASE WHEN p.token IS NULL
                 THEN format('payment %s was learned from the store and has no purchase token: consume it without one', p_payment_seq)
                 ELSE format('the purchase token does not match payment %s', p_payment_seq) END, p_payment_seq);
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
    v_pos := ledger.append('payment:' || v_seq, 'PaymentConsumed',
                           jsonb_build_object('paymentSeq', v_seq, 'userId', p_user_id), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('consumed', NULL, NULL, p_payment_seq, p_time, NULL, NULL)::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.consume(text, text, bytea, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.consume(text, text, bytea, timestamptz) TO ledger_writer;
