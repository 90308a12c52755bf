-- One step of ledger.execute_commands: the commands p_commands[p_ords[1]], p_commands[p_ords[2]],
-- … (payments only, consumes only, or one command), their results in that order. Payments go as
-- one set (ledger.record_payments), consumes as one set (ledger.consume_set), any other command
-- alone (ledger.run_command).
CREATE OR REPLACE FUNCTION ledger.run_step(p_commands ledger.command[], p_ords integer[])
RETURNS SETOF ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    v_kind   text := (p_commands[p_ords[1]]).kind;
    v_seqs   text[];
    v_users  text[];
    v_tokens bytea[];
    v_times  timestamptz[];
BEGIN
    IF v_kind IN ('purchase', 'renewal') THEN
        RETURN QUERY SELECT * FROM ledger.record_payments(
            (SELECT jsonb_agg(ledger.payment_item(p_commands[x.i]) ORDER BY x.o) FROM unnest(p_ords) WITH ORDINALITY AS x(i, o)));
    ELSIF v_kind = 'consume' AND cardinality(p_ords) > 1 THEN
        SELECT array_agg(c.payment_seq ORDER BY x.o), array_agg(c.user_id ORDER BY x.o),
               array_agg(c.token_sha256 ORDER BY x.o), array_agg(c.at ORDER BY x.o)
          INTO v_seqs, v_users, v_tokens, v_times
          FROM unnest(p_ords) WITH ORDINALITY AS x(i, o), LATERAL (SELECT (p_commands[x.i]).*) c;
        RETURN QUERY SELECT * FROM ledger.consume_set(v_seqs, v_users, v_tokens, v_times);
    ELSE
        RETURN NEXT ledger.run_command(p_commands[p_ords[1]]);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.run_step(ledger.command[], integer[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.run_step(ledger.command[], integer[]) TO ledger_writer;
