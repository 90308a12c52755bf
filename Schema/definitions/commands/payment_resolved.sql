-- The payment a name (p_name) stands for, and its owner: the name's owner is asked of the
-- payments' registry (payment_keys, which holds every payment's name and every alias), and the
-- name is looked up among that owner's rows, as a payment, else as another name of one
-- (ledger.payment_aliases). One row always; its payment is null when the name is neither.
-- Inlined by the planner where it is used (ledger.apply_consumes for a set, ledger.apply_consume
-- for a consume alone, ledger.refund).
-- Its row type changed (the owner was added): an older definition is dropped first.
DROP FUNCTION IF EXISTS ledger.payment_resolved(text);
CREATE FUNCTION ledger.payment_resolved(p_name text)
RETURNS TABLE (payment_seq text, user_id text)
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT p.payment_seq FROM ledger.payments p
                      WHERE p.payment_seq = p_name AND p.user_id = k.user_id),
                    (SELECT a.payment_seq FROM ledger.payment_aliases a
                      WHERE a.alias_seq = p_name AND a.user_id = k.user_id)),
           k.user_id
      FROM (SELECT (SELECT r.user_id FROM ledger.payment_keys r WHERE r.payment_seq = p_name) AS user_id) k
$$;
REVOKE ALL ON FUNCTION ledger.payment_resolved(text) FROM PUBLIC;
