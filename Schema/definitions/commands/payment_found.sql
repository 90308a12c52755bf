-- The recorded payment a purchase or a renewal meets: the one of its name (p_seq), else another
-- one holding its store transaction (p_store, p_txid). Each key is asked of its registry, which
-- names the payment and its owner (payment_keys, for a name that is a payment's own, not an
-- alias; transaction_keys), and the payment is read by the owner's primary key: on a cluster the
-- registry's row lives on the key's node and the payment on its owner's. Inlined by the planner
-- where it is used (ledger.apply_payments, ledger.apply_payment): a registry probe per key, the
-- second only when the first finds nothing, and one probe of payments when either does; a new
-- payment's (neither key known) reads no payment.
-- A store notification asks it for the payment holding a transaction alone (p_seq null:
-- ledger.apply_notification).
-- (A string body: projection tables are named only where names resolve when a statement is
-- planned, since a rebuild swaps them.)
-- A database made before this definition may hold it without the lineage, a row type that
-- CREATE OR REPLACE cannot change: dropped here.
DROP FUNCTION IF EXISTS ledger.payment_found(text, text, text);
CREATE FUNCTION ledger.payment_found(p_seq text, p_store text, p_txid text)
RETURNS TABLE (payment_seq text, user_id text, product_id text, price numeric,
               token_sha256 bytea, linked_token_sha256 bytea, lineage_id text)
LANGUAGE sql STABLE AS $$
    SELECT p.payment_seq, p.user_id, p.product_id, p.price, p.token_sha256, p.linked_token_sha256, p.lineage_id
      FROM ((SELECT k.names_seq AS seq, k.user_id FROM ledger.payment_keys k
              WHERE k.payment_seq = p_seq AND k.names_seq = k.payment_seq)
            UNION ALL
            (SELECT k.payment_seq, k.user_id FROM ledger.transaction_keys k
              WHERE k.store_code = p_store AND k.transaction_id = p_txid)
            LIMIT 1) AS o
      JOIN ledger.payments p ON p.payment_seq = o.seq AND p.user_id = o.user_id
$$;
REVOKE ALL ON FUNCTION ledger.payment_found(text, text, text) FROM PUBLIC;
