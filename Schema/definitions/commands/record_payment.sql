-- Records a purchase or a renewal for a direct caller (the library and ledger_writer logins).
CREATE OR REPLACE FUNCTION ledger.record_payment(p_kind text, d jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
BEGIN
    RETURN ledger.record_payment_core(p_kind, d, false);
END
$$;
REVOKE ALL ON FUNCTION ledger.record_payment(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.record_payment(text, jsonb) TO ledger_writer;
