-- The recorded lineage (subscription) of a store (p_store, p_lineage: its original transaction),
-- as its owner's rows hold it; all nulls when there is none or p_lineage is null. The owner is asked of the lineages'
-- registry (lineage_keys), then the lineage is read by the owner's primary key. Used by the
-- commands that meet or change one lineage: ledger.apply_payment, ledger.apply_notification,
-- ledger.cancel; ledger.apply_payments asks the same of a round's items at once.
-- Two statements of PL/pgSQL, for the reason ledger.payment_found gives: on a Citus
-- cluster the registry's row and the lineage live on different nodes.
CREATE OR REPLACE FUNCTION ledger.lineage_found(p_store text, p_lineage text,
                                                OUT user_id text, OUT product_id text, OUT product_type text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_user text;
BEGIN
    IF p_lineage IS NULL THEN
        RETURN;
    END IF;
    SELECT k.user_id INTO v_user FROM ledger.lineage_keys k
     WHERE k.store_code = p_store AND k.lineage_id = p_lineage;
    IF v_user IS NULL THEN
        RETURN;
    END IF;
    SELECT l.user_id, l.product_id, l.product_type INTO user_id, product_id, product_type
      FROM ledger.lineages l
     WHERE l.store_code = p_store AND l.original_transaction_id = p_lineage AND l.user_id = v_user;
END
$$;
REVOKE ALL ON FUNCTION ledger.lineage_found(text, text) FROM PUBLIC;
