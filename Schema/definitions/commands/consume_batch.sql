-- Consumes a set of payments for a direct caller (the library's batches, from `ledger ingest`
-- and group commit): p_items [{"paymentSeq": ..., "userId": ..., "purchaseTokenSha256": hex or
-- null, "time": timestamptz text}, ...], one result per item in input order, each item atomic
-- on its own (ledger.apply_consumes).
CREATE OR REPLACE FUNCTION ledger.consume_batch(p_items jsonb)
RETURNS SETOF ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_seqs   text[];
    v_users  text[];
    v_tokens bytea[];
    v_times  timestamptz[];
BEGIN
    -- As in record_payments: anything but an array is refused before anything is written.
    IF jsonb_typeof(p_items) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'p_items must be a JSON array of {"paymentSeq", "userId", "purchaseTokenSha256", "time"} items, not %',
                        coalesce(jsonb_typeof(p_items), 'null')
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT array_agg(i->>'paymentSeq' ORDER BY n), array_agg(i->>'userId' ORDER BY n),
           array_agg(decode(i->>'purchaseTokenSha256', 'hex') ORDER BY n), array_agg((i->>'time')::timestamptz ORDER BY n)
      INTO v_seqs, v_users, v_tokens, v_times
      FROM jsonb_array_elements(p_items) WITH ORDINALITY AS x(i, n);
    RETURN QUERY SELECT * FROM ledger.apply_consumes(v_seqs, v_users, v_tokens, v_times);
END
$$;
REVOKE ALL ON FUNCTION ledger.consume_batch(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.consume_batch(jsonb) TO ledger_writer;
