-- The keys whose advisory locks a command takes: the one definition, read by the entry point
-- (ledger.execute_commands takes a batch's keys at once, in the one global order of
-- ledger.lock_keys, and plans its rounds from them: ledger.plan_commands) and by each command
-- function run on its own. A key is 'kind:...'; a null key (a field the command lacks) is none.
--   purchase, renewal  its payment's keys (ledger.payment_lock_keys)
--   consume, refund    its payment by the name it gives
--   cancel             its lineage
--   restore            the user's restore on the store, and each item's payment keys
--   notification       ledger.notification_lock_keys
--   product            the product
--   accountLink        the account token
-- (IF branches, each a simple expression that PL/pgSQL evaluates without starting an executor:
-- one CASE with the restore's subquery in it would start one for every command.)
CREATE OR REPLACE FUNCTION ledger.command_lock_keys(c ledger.command) RETURNS text[]
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF c.kind IN ('purchase', 'renewal') THEN
        RETURN ledger.payment_lock_keys(c.data);
    ELSIF c.kind IN ('consume', 'refund') THEN
        RETURN ARRAY['payment:' || c.payment_seq];
    ELSIF c.kind = 'cancel' THEN
        RETURN ARRAY['lineage:' || c.store_code || ':' || c.original_transaction_id];
    ELSIF c.kind = 'restore' THEN
        RETURN ARRAY['restore:' || c.store_code || ':' || c.user_id]
            || ARRAY(SELECT unnest(ledger.payment_lock_keys(item->'data')) FROM jsonb_array_elements(c.data) AS item);
    ELSIF c.kind = 'notification' THEN
        RETURN ledger.notification_lock_keys(c.data);
    ELSIF c.kind = 'product' THEN
        RETURN ARRAY['product:' || c.store_code || ':' || c.product_id];
    ELSIF c.kind = 'accountLink' THEN
        RETURN ARRAY['account:' || c.store_code || ':' || c.app_account_token];
    END IF;
    RETURN '{}';
END
$$;
REVOKE ALL ON FUNCTION ledger.command_lock_keys(ledger.command) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.command_lock_keys(ledger.command) TO ledger_writer;
