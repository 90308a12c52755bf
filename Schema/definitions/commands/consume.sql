-- Consumes a payment: hands its goods out exactly once. A set of one through
-- ledger.apply_consumes, the one definition of the consume rules: the payment's row lock makes
-- concurrent consumes of one payment wait for each other, and the first one wins. A payment
-- first learned from a store notification has no token: its consume shows none (p_token_sha256
-- null).
CREATE OR REPLACE FUNCTION ledger.consume(p_payment_seq text, p_user_id text, p_token_sha256 bytea, p_time timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    r ledger.command_result;
BEGIN
    SELECT * INTO r FROM ledger.apply_consumes(ARRAY[p_payment_seq], ARRAY[p_user_id], ARRAY[p_token_sha256], ARRAY[p_time]);
    RETURN r;
END
$$;
REVOKE ALL ON FUNCTION ledger.consume(text, text, bytea, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.consume(text, text, bytea, timestamptz) TO ledger_writer;
