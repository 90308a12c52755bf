-- The first field of a payment event that breaks the ledger's rules, or null: what the library
-- validates (Sources/PurchaseLedger/Commands), checked again for direct callers.
CREATE OR REPLACE FUNCTION ledger.payment_invalid_field(d jsonb) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
    WHEN coalesce(d->>'paymentSeq', '') = '' THEN 'paymentSeq'
    WHEN coalesce(d->>'userId', '') = '' THEN 'userId'
    WHEN coalesce(d->>'storeCode', '') NOT IN ('AS', 'GG') THEN 'storeCode'
    WHEN coalesce(d->>'productId', '') = '' THEN 'productId'
    WHEN coalesce(d->>'productType', '') NOT IN ('CONSUMABLE', 'AUTO_RENEWABLE', 'CONSUMABLE_AUTO_RENEWABLE')
        THEN 'productType'
    -- Digits with an optional fraction; no regular expressions here, they cost more than the
    -- rest of the check together.
    WHEN translate(coalesce(d->>'price', '.'), '0123456789', '') NOT IN ('', '.')
         OR left(d->>'price', 1) = '.' OR right(d->>'price', 1) = '.' THEN 'price'
    WHEN length(coalesce(d->>'currency', '')) <> 3
         OR translate(d->>'currency', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '') <> '' THEN 'currency'
    WHEN coalesce(d->>'transactionId', '') = '' THEN 'transactionId'
    WHEN length(coalesce(d->>'purchaseTokenSha256', '')) <> 64
         OR translate(d->>'purchaseTokenSha256', '0123456789abcdefABCDEF', '') <> '' THEN 'purchaseToken'
    WHEN jsonb_typeof(d->'sandboxPayment') IS DISTINCT FROM 'boolean' THEN 'sandboxPayment'
    WHEN jsonb_typeof(d->'promotionPayment') IS DISTINCT FROM 'boolean' THEN 'promotionPayment'
    WHEN d->>'purchaseTime' IS NULL THEN 'purchaseTime'
    WHEN d->>'productType' <> 'CONSUMABLE'
         AND NOT coalesce((d->>'expiryTime')::timestamptz > (d->>'purchaseTime')::timestamptz, false)
        THEN 'expiryTime'
END;
