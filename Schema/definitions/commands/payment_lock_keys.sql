-- The keys a purchase or a renewal locks (d: its data, as ledger.apply_payments reads it).
CREATE OR REPLACE FUNCTION ledger.payment_lock_keys(d jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY[
    'payment:' || (d->>'paymentSeq'),
    'transaction:' || (d->>'storeCode') || ':' || (d->>'transactionId'),
    'lineage:' || (d->>'storeCode') || ':' || CASE WHEN d->>'productType' <> 'CONSUMABLE'
        THEN coalesce(d->>'originalTransactionId', d->>'transactionId') ELSE d->>'transactionId' END,
    CASE WHEN d->>'storeCode' = 'GG' THEN 'token:' || lower(d->>'purchaseTokenSha256') END];
REVOKE ALL ON FUNCTION ledger.payment_lock_keys(jsonb) FROM PUBLIC;
