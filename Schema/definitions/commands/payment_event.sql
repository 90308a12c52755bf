-- The data of a PurchaseRecorded or RenewalRecorded event, built from a payment command that
-- ledger.apply_payments accepted: the keys Schema/EVENTS.md documents and no others
-- (a caller's extra keys never enter the log), times in UTC with microseconds, the price as
-- its numeric text (negative zero as 0, the scale kept), the payload (or payloadBase64) as
-- given, the token's digest in lowercase hex (absent for a payment first learned from a
-- store notification, p_from_store, which is marked "source": "notification"). The one writer
-- of payment event data: what the library sends is the command, never the event.
CREATE OR REPLACE FUNCTION ledger.payment_event(d jsonb, p_from_store boolean) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
RETURN jsonb_build_object(
        'userId', d->>'userId',
        'storeCode', d->>'storeCode',
        'productId', d->>'productId',
        'productType', d->>'productType',
        'price', ((d->>'price')::numeric)::text,
        'currency', d->>'currency',
        'paymentSeq', d->>'paymentSeq',
        'transactionId', d->>'transactionId',
        'originalTransactionId', d->>'originalTransactionId',
        'purchaseTime', to_char((d->>'purchaseTime')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'expiryTime', to_char((d->>'expiryTime')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        CASE WHEN d ? 'payloadBase64' THEN 'payloadBase64' ELSE 'payload' END,
        CASE WHEN d ? 'payloadBase64' THEN d->'payloadBase64' ELSE coalesce(d->'payload', 'null') END,
        'sandboxPayment', (d->>'sandboxPayment')::boolean,
        'promotionPayment', (d->>'promotionPayment')::boolean,
        'productSeq', (d->>'productSeq')::bigint)
    || CASE WHEN d->>'purchaseTokenSha256' IS NOT NULL
            THEN jsonb_build_object('purchaseTokenSha256', lower(d->>'purchaseTokenSha256')) ELSE '{}'::jsonb END
    || CASE WHEN p_from_store THEN '{"source": "notification"}'::jsonb ELSE '{}'::jsonb END;
