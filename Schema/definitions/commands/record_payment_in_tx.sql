-- Records a purchase or a renewal in the caller's transaction (restore records its items with it).
CREATE OR REPLACE FUNCTION ledger.record_payment_in_tx(p_kind text, d jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
BEGIN
    RETURN ledger.record_payment_core(p_kind, d, false);
END
$$;
REVOKE ALL ON FUNCTION ledger.record_payment_in_tx(text, jsonb) FROM PUBLIC;
