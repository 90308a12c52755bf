-- The lineage rule, the one definition every function uses: a subscription's payments form a
-- lineage named by the original transaction, which is the payment's own transaction when it
-- starts the lineage. lineage_id applies it to a transaction's ids (a store notification about a
-- subscription); payment_lineage_id to a payment's data (a payment command or its event), where
-- a consumable has no lineage.
CREATE OR REPLACE FUNCTION ledger.lineage_id(p_original_transaction_id text, p_transaction_id text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(p_original_transaction_id, p_transaction_id);
