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
    -- Digits with an optional fraction; negative zero ('-0', '-0.00') equals 0, so its sign is
    -- dropped before the check. No regular expressions here, they cost more than the rest of
    -- the check together.
    WHEN (SELECT coalesce(q, '') = '' OR translate(q, '0123456789', '') NOT IN ('', '.')
                 OR left(q, 1) = '.' OR right(q, 1) = '.'
          FROM (SELECT CASE WHEN left(d->>'price', 1) = '-' AND translate(d->>'price', '0.', '') = '-'
                            THEN substr(d->>'price', 2) ELSE d->>'price' END AS q) AS price)
        THEN 'price'
    WHEN length(coalesce(d->>'currency', '')) <> 3
         OR translate(d->>'currency', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '') <> '' THEN 'currency'
    WHEN coalesce(d->>'transactionId', '') = '' THEN 'transactionId'
    WHEN length(coalesce(d->>'purchaseTokenSha256', '')) <> 64
         OR translate(d->>'purchaseTokenSha256', '0123456789abcdefABCDEF', '') <> '' THEN 'purchaseToken'
    WHEN jsonb_typeof(d->'sandboxPayment') IS DISTINCT FROM 'boolean' THEN 'sandboxPayment'
    WHEN jsonb_typeof(d->'promotionPayment') IS DISTINCT FROM 'boolean' THEN 'promotionPayment'
    WHEN d->>'purchaseTime' IS NULL THEN 'purchaseTime'
    -- The years 0001 to 9999, which the ledger prints and reads back; text with more than six
    -- fraction digits that PostgreSQL rounds into the year 10000 is refused too.
    WHEN NOT (d->>'purchaseTime')::timestamptz
             BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00' THEN 'purchaseTime'
    WHEN NOT coalesce((d->>'expiryTime')::timestamptz
             BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00', true) THEN 'expiryTime'
    WHEN d->>'productType' <> 'CONSUMABLE'
         AND NOT coalesce((d->>'expiryTime')::timestamptz > (d->>'purchaseTime')::timestamptz, false)
        THEN 'expiryTime'
END;
