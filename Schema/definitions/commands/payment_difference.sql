-- The first field in which a payment event (d) differs from the recorded payment (p_seq, its
-- owner p_user, as ledger.payment_found read it), or null.
-- (Projection tables are only ever named inside string bodies, which resolve names when they
-- run: a rebuild swaps the tables, and a parsed body would keep pointing at the old ones.
-- PL/pgSQL plans are dropped when a table they use is, and planned again by name.)
-- A database made before the key registries may hold it without the owner: dropped here.
DROP FUNCTION IF EXISTS ledger.payment_difference(text, jsonb);
CREATE OR REPLACE FUNCTION ledger.payment_difference(p_seq text, p_user text, d jsonb) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_field text;
BEGIN
    -- A statement of its own, not a subquery in RETURN: Citus plans no subquery of a
    -- distributed table within an expression under a generic plan's parameters.
    SELECT CASE
        WHEN p.store_code IS DISTINCT FROM d->>'storeCode' THEN 'storeCode'
        WHEN p.product_type IS DISTINCT FROM d->>'productType' THEN 'productType'
        WHEN p.price IS DISTINCT FROM (d->>'price')::numeric THEN 'price'
        WHEN p.currency IS DISTINCT FROM d->>'currency' THEN 'currency'
        WHEN p.transaction_id IS DISTINCT FROM d->>'transactionId' THEN 'transactionId'
        WHEN ledger.lineage_id(p.original_transaction_id, p.transaction_id)
             IS DISTINCT FROM ledger.lineage_id(d->>'originalTransactionId', d->>'transactionId') THEN 'originalTransactionId'
        WHEN p.purchase_time IS DISTINCT FROM (d->>'purchaseTime')::timestamptz THEN 'purchaseTime'
        WHEN p.expiry_time IS DISTINCT FROM (d->>'expiryTime')::timestamptz THEN 'expiryTime'
        WHEN p.payload IS DISTINCT FROM ledger.payload_bytes(d) THEN 'payload'
        WHEN p.sandbox_payment IS DISTINCT FROM (d->>'sandboxPayment')::boolean THEN 'sandboxPayment'
        WHEN p.promotion_payment IS DISTINCT FROM (d->>'promotionPayment')::boolean THEN 'promotionPayment'
        WHEN p.product_seq IS DISTINCT FROM (d->>'productSeq')::bigint THEN 'productSeq'
        WHEN NOT ledger.digest_equal(p.token_sha256, decode(d->>'purchaseTokenSha256', 'hex')) THEN 'purchaseToken'
    END
      INTO v_field
      FROM ledger.payments p WHERE p.payment_seq = p_seq AND p.user_id = p_user;
    RETURN v_field;
END
$$;
