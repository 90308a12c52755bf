-- One command, by its own function (each takes its own keys and applies its kind's rules).
CREATE OR REPLACE FUNCTION ledger.run_command(c ledger.command)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    r ledger.command_result;
BEGIN
    CASE c.kind
    WHEN 'purchase', 'renewal' THEN
        IF c.job IS NULL THEN
            r := ledger.record_payment(c.kind, c.data);
        ELSE
            -- With its job: as a set of one, whose item carries the job.
            SELECT * INTO r FROM ledger.record_payments(jsonb_build_array(ledger.payment_item(c)));
        END IF;
    WHEN 'consume' THEN
        r := ledger.consume(c.payment_seq, c.user_id, c.token_sha256, c.at);
    WHEN 'refund' THEN
        r := ledger.refund(c.payment_seq, c.at, c.reason);
    WHEN 'cancel' THEN
        r := ledger.cancel(c.store_code, c.original_transaction_id, c.at);
    WHEN 'restore' THEN
        r := ledger.restore(c.user_id, c.store_code, c.at, c.data);
    WHEN 'notification' THEN
        r := ledger.notify(c.data);
    WHEN 'product' THEN
        r := ledger.declare_product(c.store_code, c.product_id, c.product_type, c.price, c.currency);
    WHEN 'accountLink' THEN
        r := ledger.link_account(c.user_id, c.store_code, c.app_account_token);
    ELSE
        r := ledger.rejected('INVALID_INPUT', format('unknown command kind %s', coalesce(c.kind, 'null')));
    END CASE;
    RETURN r;
END
$$;
REVOKE ALL ON FUNCTION ledger.run_command(ledger.command) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.run_command(ledger.command) TO ledger_writer;
