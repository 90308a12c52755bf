-- Records one purchase or renewal (p_kind 'purchase' | 'renewal'; d: the payment command):
-- alone (ledger.apply_payment), by the rules a set of payments follows too.
-- p_from_store: the payment comes from a verified store notification.
CREATE OR REPLACE FUNCTION ledger.record_payment_core(p_kind text, d jsonb, p_from_store boolean)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
BEGIN
    RETURN ledger.apply_payment(p_kind, d, p_from_store, NULL);
END
$$;
REVOKE ALL ON FUNCTION ledger.record_payment_core(text, jsonb, boolean) FROM PUBLIC;
