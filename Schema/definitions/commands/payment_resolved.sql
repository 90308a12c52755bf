-- The payment a name (p_name) stands for, and its owner, as the payments' registry names them
-- (payment_keys: every payment's name names itself, every alias its payment); nulls when the
-- name names none. Used by ledger.apply_consume for a consume alone and ledger.refund, which
-- then read the payment by the owner's primary key, and by ledger.payment_outcome to ask
-- whether a name is taken; ledger.apply_consumes asks the same of a set's names at once.
-- PL/pgSQL, for the reason ledger.payment_found gives: on a Citus cluster no
-- statement reads a distributed table through a SQL-language function.
-- A database made before this definition may hold it as a set-returning SQL function, a result
-- type that CREATE OR REPLACE cannot change: dropped here.
DROP FUNCTION IF EXISTS ledger.payment_resolved(text);
CREATE FUNCTION ledger.payment_resolved(p_name text, OUT payment_seq text, OUT user_id text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT k.names_seq, k.user_id INTO payment_seq, user_id FROM ledger.payment_keys k WHERE k.payment_seq = p_name;
END
$$;
REVOKE ALL ON FUNCTION ledger.payment_resolved(text) FROM PUBLIC;
