-- Records a refund (App Store refund or revocation, Google Play voided purchase); a refund
-- that was reversed can be refunded again.
CREATE OR REPLACE FUNCTION ledger.refund(p_payment_seq text, p_time timestamptz, p_reason text)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_seq text := p_payment_seq;
    p     record;
    v_pos bigint;
BEGIN
    SELECT user_id, refunded_at INTO p FROM ledger.payments WHERE payment_seq = v_seq FOR UPDATE;
    IF NOT FOUND THEN
        v_seq := ledger.payment_named(p_payment_seq);
        SELECT user_id, refunded_at INTO p FROM ledger.payments WHERE payment_seq = v_seq FOR UPDATE;
    END IF;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND', format('no payment %s', p_payment_seq), p_payment_seq);
    ELSIF p.refunded_at IS NOT NULL THEN
        RETURN ROW('duplicate', NULL, NULL, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    v_pos := ledger.append('payment:' || v_seq, 'PaymentRefunded',
                           jsonb_strip_nulls(jsonb_build_object('paymentSeq', v_seq, 'userId', p.user_id,
                                                                'reason', p_reason)), p_time);
    PERFORM ledger.project_positions(ARRAY[v_pos]);
    RETURN ROW('recorded', NULL, NULL, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.refund(text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.refund(text, timestamptz, text) TO ledger_writer;
