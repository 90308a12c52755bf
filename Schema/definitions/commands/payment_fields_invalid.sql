-- The first rule between a payment command's fields that it breaks (its field's name), or
-- null: a consumable has no expiry time; any other product expires after its purchase time.
-- Checked after every field's own rule (ledger.field_invalid) holds, so both times are times.
CREATE OR REPLACE FUNCTION ledger.payment_fields_invalid(d jsonb) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
        WHEN d->>'productType' = 'CONSUMABLE' AND d->>'expiryTime' IS NOT NULL THEN 'expiryTime'
        WHEN d->>'productType' <> 'CONSUMABLE'
             AND NOT coalesce((d->>'expiryTime')::timestamptz > (d->>'purchaseTime')::timestamptz, false)
            THEN 'expiryTime'
    END;
REVOKE ALL ON FUNCTION ledger.payment_fields_invalid(jsonb) FROM PUBLIC;
