-- Records one purchase or renewal (p_kind 'purchase' | 'renewal'; d: the payment command):
-- a batch of one through ledger.apply_payments, the one definition of the payment rules.
-- p_from_store: the payment comes from a verified store notification.
CREATE OR REPLACE FUNCTION ledger.record_payment_core(p_kind text, d jsonb, p_from_store boolean)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    r ledger.command_result;
BEGIN
    SELECT * INTO r FROM ledger.apply_payments(jsonb_build_array(jsonb_build_object('kind', p_kind, 'data', d)), p_from_store);
    RETURN r;
END
$$;
REVOKE ALL ON FUNCTION ledger.record_payment_core(text, jsonb, boolean) FROM PUBLIC;
