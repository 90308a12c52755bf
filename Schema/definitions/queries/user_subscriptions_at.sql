-- One user's subscription lineages at p_at (`ledger subscriptions`, GET
-- /v1/users/{userId}/subscriptions, the console): ledger.subscriptions_at's statement for the
-- lineages of p_user_id alone, each lineage's state read among its owner's rows and its status
-- ledger.subscription_status's. SubscriptionsAtTests holds the two to the same rows.
-- The user is an argument, not a filter of the caller's: on one server the planner inlines the
-- function into the caller's statement and the user reaches the lineages' index, as a filter
-- did; on a Citus cluster, where no statement reads a distributed table through a SQL function,
-- ledger.install_distributed_queries makes it PL/pgSQL, whose statement names the user's shard.
CREATE OR REPLACE FUNCTION ledger.user_subscriptions_at(p_user_id text, p_at timestamptz)
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
     WHERE l.user_id = p_user_id
$$;
GRANT EXECUTE ON FUNCTION ledger.user_subscriptions_at(text, timestamptz) TO ledger_reader, ledger_writer;
