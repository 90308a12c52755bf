-- The keys a purchase or a renewal locks (d: its data, as ledger.apply_payments reads it): the
-- payment, its store transaction, its lineage (the transaction itself for a consumable, which
-- has none) and, on Google Play, its purchase token.
CREATE OR REPLACE FUNCTION ledger.payment_lock_keys(d jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY[
    'payment:' || (d->>'paymentSeq'),
    'transaction:' || (d->>'storeCode') || ':' || (d->>'transactionId'),
    'lineage:' || (d->>'storeCode') || ':' || coalesce(ledger.payment_lineage_id(d), d->>'transactionId'),
    CASE WHEN d->>'storeCode' = 'GG' THEN 'token:' || lower(d->>'purchaseTokenSha256') END];
REVOKE ALL ON FUNCTION ledger.payment_lock_keys(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.payment_lock_keys(jsonb) TO ledger_writer;
