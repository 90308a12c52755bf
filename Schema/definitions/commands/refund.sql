-- Records a refund (App Store refund or revocation, Google Play voided purchase); a refund
-- that was reversed can be refunded again. The payment is the one its name stands for
-- (ledger.payment_resolved: its owner asked of the registry), read and locked among its owner's
-- rows.
-- A database made before the key registries may hold ledger.payment_named, which resolves an
-- alias without its owner: dropped here.
DROP FUNCTION IF EXISTS ledger.payment_named(text);
CREATE OR REPLACE FUNCTION ledger.refund(p_payment_seq text, p_time timestamptz, p_reason text)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    r     record;
    p     record;
    v_pos bigint;
BEGIN
    -- The writers' gate first (ledger.writers_gate), as every command takes it.
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    r := ledger.payment_resolved(p_payment_seq);
    SELECT pa.payment_seq, pa.user_id, pa.refunded_at INTO p
      FROM ledger.payments pa WHERE pa.payment_seq = r.payment_seq AND pa.user_id = r.user_id
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND', format('no payment %s', p_payment_seq), p_payment_seq);
    ELSIF p.refunded_at IS NOT NULL THEN
        RETURN ROW('duplicate', NULL, NULL, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    v_pos := ledger.append('payment:' || p.payment_seq, 'PaymentRefunded',
                           jsonb_strip_nulls(jsonb_build_object('paymentSeq', p.payment_seq, 'userId', p.user_id,
                                                                'reason', p_reason)), p_time);
    PERFORM ledger.project_positions(ARRAY[v_pos], p.user_id);
    RETURN ROW('recorded', NULL, NULL, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
END
$$;
REVOKE ALL ON FUNCTION ledger.refund(text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.refund(text, timestamptz, text) TO ledger_writer;
