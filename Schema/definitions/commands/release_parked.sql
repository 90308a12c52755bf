-- Applies, in the store's order, the parked notifications that one of the keys names and whose
-- owner is known now (ledger.release_notification, one at a time). A parked notification is the
-- owner of facts without one's (''), and every read of them names that owner.
CREATE OR REPLACE FUNCTION ledger.release_parked(p_store text, p_lineage text, p_transaction text, p_account text, p_token bytea)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    w       record;
    v_count integer := 0;
BEGIN
    FOR w IN
        SELECT n.position
          FROM ledger.notifications n
         WHERE n.user_id = '' AND n.parked AND n.store_code = p_store
           AND (n.lineage_key = p_lineage OR n.transaction_key = p_transaction
                OR n.account_key = p_account OR n.token_key = p_token)
         ORDER BY n.effective_at, n.position
    LOOP
        IF ledger.release_notification(w.position) THEN
            v_count := v_count + 1;
        END IF;
    END LOOP;
    RETURN v_count;
END
$$;
REVOKE ALL ON FUNCTION ledger.release_parked(text, text, text, text, bytea) FROM PUBLIC;
