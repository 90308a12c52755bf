-- The data of a new payment's event (p_type, p_data: as ledger.payment_outcome made them), with
-- "purchaseTokenClaimed": false when its Google purchase token names another payment already
-- (ledger.token_keys), which it keeps: the event then says that its payment does not claim the
-- token, and every replay leaves the token where the live path did. Run under the token's key
-- lock (ledger.payment_lock_keys), so the registry holds every payment committed before.
-- Without the mark a replay gives a token to the first payment in the order of positions, which
-- is the order of the commits on one server but not across a cluster's nodes: a purchase
-- appended on the second worker before another user's with the same token on the first holds the
-- higher position (docs/scale-out.md, "A decision the replay cannot remake across nodes"). So
-- the payments ask where commands run on the workers only (ledger.commands_on_workers()): on one
-- server the later payment waited for the token's key lock and holds the higher position, and the
-- question would cost 3.8 % of a Google purchase's instructions for an answer the log's order
-- already gives (BENCHMARKS.md). A single-node log moved onto Citus keeps its one node's order.
-- The mark is written only when false: a payment's event is otherwise what it was.
CREATE OR REPLACE FUNCTION ledger.payment_token_claim(p_type text, p_data jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_token bytea;
BEGIN
    IF p_type NOT IN ('PurchaseRecorded', 'RenewalRecorded') OR p_data->>'storeCode' IS DISTINCT FROM 'GG'
       OR NOT p_data ? 'purchaseTokenSha256' THEN
        RETURN p_data;
    END IF;
    -- The token as a value: on a cluster the lookup is then a router query on its shard, planned once.
    v_token := decode(p_data->>'purchaseTokenSha256', 'hex');
    PERFORM FROM ledger.token_keys k WHERE k.token_sha256 = v_token;
    RETURN CASE WHEN FOUND THEN p_data || '{"purchaseTokenClaimed": false}' ELSE p_data END;
END
$$;
REVOKE ALL ON FUNCTION ledger.payment_token_claim(text, jsonb) FROM PUBLIC;
