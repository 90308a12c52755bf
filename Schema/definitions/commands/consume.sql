-- Consumes a payment: hands its goods out exactly once (ledger.apply_consume, by the consume
-- rules a set follows too): the payment's row lock makes concurrent consumes of one payment wait
-- for each other, and the first one wins. A payment
-- first learned from a store notification has no token: its consume shows none (p_token_sha256
-- null).
CREATE OR REPLACE FUNCTION ledger.consume(p_payment_seq text, p_user_id text, p_token_sha256 bytea, p_time timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
BEGIN
    RETURN ledger.apply_consume(p_payment_seq, p_user_id, p_token_sha256, p_time);
END
$$;
REVOKE ALL ON FUNCTION ledger.consume(text, text, bytea, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.consume(text, text, bytea, timestamptz) TO ledger_writer;
