-- The payment a consume names (p_name): the payment of that name, else the one the name is
-- another name of (an alias, ledger.payment_aliases); no row's payment (null) when neither is.
-- Inlined by the planner where it is used (ledger.apply_consumes for a set, ledger.apply_consume
-- for a consume alone).
CREATE OR REPLACE FUNCTION ledger.payment_resolved(p_name text)
RETURNS TABLE (payment_seq text)
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT p.payment_seq FROM ledger.payments p WHERE p.payment_seq = p_name),
                    (SELECT a.payment_seq FROM ledger.payment_aliases a WHERE a.alias_seq = p_name))
$$;
REVOKE ALL ON FUNCTION ledger.payment_resolved(text) FROM PUBLIC;
