-- The recorded payment a purchase or a renewal meets: the one of its name (p_seq), else another
-- one holding its store transaction (p_store, p_txid); all nulls when there is none. Each key is
-- asked of its registry, which names the payment and its owner (payment_keys, for a name that is
-- a payment's own, not an alias; transaction_keys), and the payment is then read by the owner's
-- primary key: a registry probe per key, the second only when the first finds nothing, and one
-- probe of payments when either does; a new payment's (neither key known) reads no payment.
-- Used by ledger.apply_payment and, for the payment holding a transaction alone (p_seq null),
-- ledger.apply_notification; ledger.apply_payments asks the same of a round's items at once.
-- Three statements of PL/pgSQL, not one SQL statement: on a Citus cluster the registry's row
-- lives on its key's node and the payment on its owner's, a join of the two is not planned, and
-- neither is a SQL-language function reading a distributed table (docs/scale-out.md). A name
-- that is the payment's own is asked as names_seq = p_seq: Citus plans no statement comparing
-- the distribution column with another column under a generic plan's parameters.
-- A database made before this definition may hold it as a set-returning SQL function, a result
-- type that CREATE OR REPLACE cannot change: dropped here.
DROP FUNCTION IF EXISTS ledger.payment_found(text, text, text);
CREATE FUNCTION ledger.payment_found(p_seq text, p_store text, p_txid text,
                                     OUT payment_seq text, OUT user_id text, OUT product_id text, OUT price numeric,
                                     OUT token_sha256 bytea, OUT linked_token_sha256 bytea, OUT lineage_id text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_seq  text;
    v_user text;
BEGIN
    SELECT k.names_seq, k.user_id INTO v_seq, v_user FROM ledger.payment_keys k
     WHERE k.payment_seq = p_seq AND k.names_seq = p_seq;
    IF v_seq IS NULL THEN
        SELECT k.payment_seq, k.user_id INTO v_seq, v_user FROM ledger.transaction_keys k
         WHERE k.store_code = p_store AND k.transaction_id = p_txid;
        IF v_seq IS NULL THEN
            RETURN;
        END IF;
    END IF;
    SELECT p.payment_seq, p.user_id, p.product_id, p.price, p.token_sha256, p.linked_token_sha256, p.lineage_id
      INTO payment_seq, user_id, product_id, price, token_sha256, linked_token_sha256, lineage_id
      FROM ledger.payments p WHERE p.payment_seq = v_seq AND p.user_id = v_user;
END
$$;
REVOKE ALL ON FUNCTION ledger.payment_found(text, text, text) FROM PUBLIC;
