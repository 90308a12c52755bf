-- The lineage rule (ledger.lineage_id) for a payment's data: a consumable has no lineage.
CREATE OR REPLACE FUNCTION ledger.payment_lineage_id(d jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN d->>'productType' <> 'CONSUMABLE'
            THEN ledger.lineage_id(d->>'originalTransactionId', d->>'transactionId') END;
