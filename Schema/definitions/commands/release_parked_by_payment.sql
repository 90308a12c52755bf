-- Applies the parked notifications that a newly recorded payment releases (e: its event's data,
-- ledger.payment_event): those of its store that name its lineage, its store transaction or, on
-- Google Play, its purchase token (ledger.release_parked). Called by ledger.apply_payment and
-- ledger.apply_payments for each payment they record, while any notification is parked.
CREATE OR REPLACE FUNCTION ledger.release_parked_by_payment(e jsonb)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT FROM ledger.notifications WHERE user_id = '' AND parked AND store_code = e->>'storeCode') THEN
        PERFORM ledger.release_parked(e->>'storeCode', ledger.payment_lineage_id(e), e->>'transactionId', NULL,
                                      CASE WHEN e->>'storeCode' = 'GG' THEN decode(e->>'purchaseTokenSha256', 'hex') END);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.release_parked_by_payment(jsonb) FROM PUBLIC;
