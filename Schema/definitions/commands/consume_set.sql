-- Consumes a set of payments, typed (the consumes of one step of ledger.execute_commands): item
-- i consumes p_seqs[i] for p_users[i], showing the token digest p_tokens[i] (null: none), at
-- p_times[i]; one result per item in input order (ledger.apply_consumes).
CREATE OR REPLACE FUNCTION ledger.consume_set(p_seqs text[], p_users text[], p_tokens bytea[], p_times timestamptz[])
RETURNS SETOF ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
BEGIN
    RETURN QUERY SELECT * FROM ledger.apply_consumes(p_seqs, p_users, p_tokens, p_times);
END
$$;
REVOKE ALL ON FUNCTION ledger.consume_set(text[], text[], bytea[], timestamptz[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.consume_set(text[], text[], bytea[], timestamptz[]) TO ledger_writer;
