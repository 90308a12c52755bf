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
CREATE OR REPLACE FUNCTION ledger.command_lock_keys(c ledger.command) RETURNS text[]
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN CASE c.kind
        WHEN 'purchase' THEN ledger.payment_lock_keys(c.data)
        WHEN 'renewal' THEN ledger.payment_lock_keys(c.data)
        WHEN 'consume' THEN ARRAY['payment:' || c.payment_seq]
        WHEN 'refund' THEN ARRAY['payment:' || c.payment_seq]
        WHEN 'cancel' THEN ARRAY['lineage:' || c.store_code || ':' || c.original_transaction_id]
        WHEN 'restore' THEN ARRAY['restore:' || c.store_code || ':' || c.user_id]
            || ARRAY(SELECT unnest(ledger.payment_lock_keys(item->'data')) FROM jsonb_array_elements(c.data) AS item)
        WHEN 'notification' THEN ledger.notification_lock_keys(c.data)
        WHEN 'product' THEN ARRAY['product:' || c.store_code || ':' || c.product_id]
        WHEN 'accountLink' THEN ARRAY['account:' || c.store_code || ':' || c.app_account_token]
        ELSE '{}'::text[] END;
END
$$;
REVOKE ALL ON FUNCTION ledger.command_lock_keys(ledger.command) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.command_lock_keys(ledger.command) TO ledger_writer;
