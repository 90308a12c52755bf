-- Every subscription lineage with at least one payment made by p_at, as docs/contract.md §3.2
-- evaluates it at p_at, billing states included, for every user: the ledger's summary, the
-- tests. One user's are ledger.user_subscriptions_at's, the same statement for one owner's
-- lineages; the status of each is ledger.subscription_status for both. On a Citus cluster
-- ledger.install_distributed_queries makes both PL/pgSQL. (A database of the first releases may hold a version
-- without the billing states' columns: the migrator's adoption drops it first.)
-- Each lineage is read from ledger.lineage_states: its row for the latest change point at or
-- before p_at, one backward step of the primary key (install_lineage_states.sql has the rules
-- of each column). What still depends on p_at itself, the comparisons with the live expiry, the
-- grace period's end and a refunded payment's expiry, is made here, once per lineage in the
-- LIMIT 1 subquery (BENCHMARKS.md, "subscriptions --at from lineage states").
CREATE OR REPLACE FUNCTION ledger.subscriptions_at(p_at timestamptz)
RETURNS TABLE (user_id text, store_code text, product_id text, product_type text,
               original_transaction_id text, latest_payment_seq text, purchase_time timestamptz,
               expiry_time timestamptz, auto_renewing boolean, status text, entitled boolean,
               grace_period_expiry_time timestamptz)
LANGUAGE sql STABLE AS $$
SELECT l.user_id, l.store_code, l.product_id, l.product_type, l.original_transaction_id,
       s.latest_payment_seq, s.first_purchase, s.live_expiry, s.auto_renewing, s.status,
       s.status IN ('active', 'inGracePeriod'),
       CASE WHEN s.status = 'inGracePeriod' THEN s.grace_expires_at END
  FROM ledger.lineages l
 CROSS JOIN LATERAL (
       SELECT st.latest_payment_seq, st.first_purchase, st.live_expiry, st.auto_renewing, st.grace_expires_at,
              ledger.subscription_status(p_at, st.live_expiry, st.billing_state, st.grace_expires_at, st.revoked_until) AS status
         FROM ledger.lineage_states st
        WHERE st.store_code = l.store_code AND st.lineage_id = l.original_transaction_id AND st.user_id = l.user_id
          AND st.valid_from <= p_at
        ORDER BY st.valid_from DESC
        LIMIT 1) s
$$;
GRANT EXECUTE ON FUNCTION ledger.subscriptions_at(timestamptz) TO ledger_reader, ledger_writer;
