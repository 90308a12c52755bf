-- n: a verified notification as the library hands it over (Notifications/StoreNotification.swift):
--   storeCode, notificationId, notificationType, effect, effectiveAt, and as the effect needs
--   them: transactionId, originalTransactionId, appAccountToken, storeProductType
--   ('consumable' | 'subscription'), payment (the §2.1 event data, without userId for App Store),
--   refundAt, reason, expiryTime, gracePeriodExpiresAt, purchaseTokenSha256, orderId; and the
--   store's own text (signedPayload, or Google's message). appAccountToken is the store's account
--   id: Apple's appAccountToken, or Google's obfuscatedExternalAccountId.
-- effect: payment | learnedPayment | ask | consumptionRequest | autoRenewOff | autoRenewOn | inGracePeriod | billingRetry | onHold | paused |
--   billingEnded | refund | refundReversed | revoke | revokeLatest | extend | ignored.

-- The user a notification belongs to, or null when the ledger does not know yet: the owner of a
-- key it names, asked of the key's registry (transaction_keys, lineage_keys, token_keys;
-- account_links is keyed by the account token alone), so that on a cluster each question goes
-- to the one node that holds the key. Each key is a variable before a statement names it: Citus
-- finds a key's node from a parameter or a constant, not from an expression of one (n->>'…').
CREATE OR REPLACE FUNCTION ledger.notification_owner(n jsonb) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_user    text;
    v_txid    text := n->>'transactionId';
    v_lineage text := n->>'originalTransactionId';
    v_order   text := n->>'orderId';
    v_token   bytea;
    v_account text := n->>'appAccountToken';
BEGIN
    IF n->>'storeCode' = 'GG' THEN
        IF n->'payment'->>'userId' IS NOT NULL THEN
            RETURN n->'payment'->>'userId';
        END IF;
        -- A voided purchase is about one order (§5.3): it belongs to the order's user, and
        -- waits (parked) until that order is recorded, even when its token is known.
        IF v_order IS NOT NULL THEN
            SELECT user_id INTO v_user FROM ledger.transaction_keys
             WHERE store_code = 'GG' AND transaction_id = v_order;
            RETURN v_user;
        END IF;
        v_token := decode(n->>'purchaseTokenSha256', 'hex');
        SELECT user_id INTO v_user FROM ledger.token_keys WHERE token_sha256 = v_token;
        -- A payment the Play Developer API described (§6.3): its obfuscatedExternalAccountId,
        -- linked to a user by an `accountLink` line.
        IF v_user IS NULL AND v_account IS NOT NULL THEN
            SELECT user_id INTO v_user FROM ledger.account_links
             WHERE store_code = 'GG' AND app_account_token = v_account;
        END IF;
        RETURN v_user;
    END IF;
    -- Apple's CONSUMPTION_REQUEST is answered from the payment's own facts (§6.4): it waits
    -- until the ledger holds that transaction.
    IF n->>'effect' = 'consumptionRequest' THEN
        SELECT user_id INTO v_user FROM ledger.transaction_keys WHERE store_code = 'AS' AND transaction_id = v_txid;
        RETURN v_user;
    END IF;
    SELECT user_id INTO v_user FROM ledger.lineage_keys
     WHERE store_code = 'AS' AND lineage_id = v_lineage;
    IF v_user IS NULL THEN
        SELECT user_id INTO v_user FROM ledger.transaction_keys WHERE store_code = 'AS' AND transaction_id = v_txid;
    END IF;
    IF v_user IS NULL THEN
        SELECT user_id INTO v_user FROM ledger.account_links
         WHERE store_code = 'AS' AND app_account_token = v_account;
    END IF;
    RETURN v_user;
END
$$;
REVOKE ALL ON FUNCTION ledger.notification_owner(jsonb) FROM PUBLIC;
