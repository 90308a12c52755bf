-- Records a batch of purchases and renewals for a direct caller (the library's batches, from
-- `ledger ingest` and group commit): p_items [{"kind": ..., "data": {...}}, ...], one result per
-- item in input order, each item atomic on its own (ledger.apply_payments).
CREATE OR REPLACE FUNCTION ledger.record_payments(p_items jsonb)
RETURNS SETOF ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
BEGIN
    -- Anything but an array is a caller's mistake, refused before anything is locked or
    -- written, with an error that names the argument (not jsonb_array_elements' own).
    IF jsonb_typeof(p_items) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'p_items must be a JSON array of {"kind", "data"} items, not %',
                        coalesce(jsonb_typeof(p_items), 'null')
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY SELECT * FROM ledger.apply_payments(p_items, false);
END
$$;
REVOKE ALL ON FUNCTION ledger.record_payments(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.record_payments(jsonb) TO ledger_writer;
