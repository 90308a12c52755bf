-- The payment a paymentSeq names: itself, or the payment it is another name of.
CREATE OR REPLACE FUNCTION ledger.payment_named(p_seq text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce((SELECT a.payment_seq FROM ledger.payment_aliases a WHERE a.alias_seq = p_seq), p_seq);
END
$$;
REVOKE ALL ON FUNCTION ledger.payment_named(text) FROM PUBLIC;
