-- The payment a name (p_name) stands for, and its owner, as the payments' registry names them
-- (payment_keys: every payment's name names itself, every alias its payment); no row when the
-- name names none. Inlined by the planner where it is used (ledger.apply_consumes for a set,
-- ledger.apply_consume for a consume alone, ledger.refund), which read the payment by the
-- owner's primary key.
-- A database made before this definition may hold it without the owner, a row type that
-- CREATE OR REPLACE cannot change: dropped here.
DROP FUNCTION IF EXISTS ledger.payment_resolved(text);
CREATE FUNCTION ledger.payment_resolved(p_name text)
RETURNS TABLE (payment_seq text, user_id text)
LANGUAGE sql STABLE AS $$
    SELECT k.names_seq, k.user_id FROM ledger.payment_keys k WHERE k.payment_seq = p_name
$$;
REVOKE ALL ON FUNCTION ledger.payment_resolved(text) FROM PUBLIC;
