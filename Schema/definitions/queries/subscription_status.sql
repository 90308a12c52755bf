-- A subscription lineage's status at p_at (docs/contract.md §3.2), from its row of
-- ledger.lineage_states for the latest change point at or before p_at: active while its live
-- expiry is ahead; else the billing state it is in (a grace period past its end is billingRetry);
-- else revoked while a refunded payment's expiry is ahead; else expired. The one definition of
-- the rule, for ledger.subscriptions_at (every user's) and ledger.user_subscriptions_at (one
-- user's). A function of values, read by no table: the planner inlines it into either statement,
-- and a Citus cluster plans it where it plans no SQL function that reads a table.
CREATE OR REPLACE FUNCTION ledger.subscription_status(p_at timestamptz, live_expiry timestamptz, billing_state text,
                                                      grace_expires_at timestamptz, revoked_until timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN live_expiry > p_at THEN 'active'
            -- A billing state holds from its time until a renewal paid after it.
            WHEN billing_state IS NOT NULL THEN
                 CASE WHEN billing_state <> 'inGracePeriod' THEN billing_state
                      WHEN grace_expires_at IS NULL OR grace_expires_at > p_at THEN 'inGracePeriod'
                      ELSE 'billingRetry' END
            WHEN revoked_until > p_at THEN 'revoked'
            ELSE 'expired' END;
