-- The outcome of one purchase or renewal (docs/contract.md §2.1, §3) and the event it appends:
-- the one definition of the payment rules that ledger.apply_payments applies to a round of
-- items and ledger.apply_payment to a payment alone.
--   p_kind, d: the item ('purchase' | 'renewal', the payment command); p_from_store: it comes
--     from a verified store notification; p_field: the field it is refused for
--     (ledger.payment_refused_field), or null;
--   p_*: the recorded payment it meets (ledger.payment_found; p_found false when none);
--   l_*: its lineage as recorded (or as an earlier item of the same round defines it).
-- Returns the result (recorded, duplicate or rejected) and, when something is appended, the
-- event's stream, type, data and time: a new payment's PurchaseRecorded or RenewalRecorded
-- (data: ledger.payment_event), or a PaymentLinked on the payment first learned from a store
-- notification that an SDK line with the same user, product and price names (its paymentSeq,
-- when it differs, becomes an alias; its token is linked). stream is null when nothing is.
-- A set-returning SQL function, inlined by the planner where it is used; OFFSET 0 keeps the
-- outcome computed once per item (a flattened subquery would compute it for every reference).
CREATE OR REPLACE FUNCTION ledger.payment_outcome(
        p_kind text, d jsonb, p_from_store boolean, p_field text,
        p_found boolean, p_seq text, p_user text, p_product text, p_price numeric, p_token bytea, p_linked bytea,
        l_found boolean, l_user text, l_product text, l_type text)
RETURNS TABLE (outcome ledger.command_result, stream text, type text, data jsonb, at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT o.outcome,
           CASE WHEN (o.outcome).status = 'recorded' THEN 'payment:' || o.seq
                WHEN (o.outcome).status = 'duplicate' AND o.links THEN 'payment:' || p_seq END,
           CASE WHEN (o.outcome).status = 'recorded'
                THEN CASE p_kind WHEN 'renewal' THEN 'RenewalRecorded' ELSE 'PurchaseRecorded' END
                ELSE 'PaymentLinked' END,
           CASE WHEN (o.outcome).status = 'recorded' THEN o.e
                ELSE jsonb_build_object('paymentSeq', p_seq, 'userId', p_user,
                                        'alias', CASE WHEN o.seq <> p_seq THEN o.seq END,
                                        'purchaseTokenSha256', o.e->>'purchaseTokenSha256') END,
           CASE WHEN (o.outcome).status = 'recorded' THEN (o.e->>'purchaseTime')::timestamptz ELSE now() END
      FROM (SELECT x.seq, x.e,
                   CASE
                   WHEN p_field IS NOT NULL THEN ledger.rejected('INVALID_INPUT',
                        format('payment %s: %s is missing or invalid', coalesce(x.seq, '(no paymentSeq)'), p_field), x.seq)
                   WHEN p_found AND p_from_store THEN ROW('duplicate', NULL, NULL, p_seq, NULL, NULL, NULL)::ledger.command_result
                   -- First learned from a store notification.
                   WHEN p_found AND p_token IS NULL THEN CASE
                        WHEN p_user IS DISTINCT FROM d->>'userId' THEN
                             ledger.rejected('USER_INVALID', format('payment %s belongs to another user', x.seq), x.seq)
                        WHEN p_product IS DISTINCT FROM d->>'productId' THEN ledger.rejected('PRODUCT_INVALID',
                             format('payment %s was recorded for product %s, not %s', x.seq, p_product, d->>'productId'), x.seq)
                        WHEN p_price IS DISTINCT FROM (d->>'price')::numeric THEN ledger.rejected('PAYMENT_CONFLICT',
                             format('transaction %s of store %s was recorded from the store with price %s', x.txid, x.store, p_price), x.seq)
                        WHEN p_linked IS NOT NULL AND NOT ledger.digest_equal(p_linked, x.token) THEN ledger.rejected('PAYMENT_CONFLICT',
                             format('transaction %s of store %s was recorded with another purchaseToken', x.txid, x.store), x.seq)
                        ELSE ROW('duplicate', NULL, NULL, x.seq, NULL, NULL, NULL)::ledger.command_result END
                   WHEN p_found AND p_seq <> x.seq THEN ledger.rejected('PAYMENT_CONFLICT',
                        format('transaction %s of store %s is already recorded as payment %s', x.txid, x.store, p_seq), x.seq)
                   WHEN p_found THEN CASE
                        WHEN p_user IS DISTINCT FROM d->>'userId' THEN
                             ledger.rejected('USER_INVALID', format('payment %s belongs to another user', x.seq), x.seq)
                        WHEN p_product IS DISTINCT FROM d->>'productId' THEN ledger.rejected('PRODUCT_INVALID',
                             format('payment %s was recorded for product %s, not %s', x.seq, p_product, d->>'productId'), x.seq)
                        WHEN x.difference IS NOT NULL THEN ledger.rejected('PAYMENT_CONFLICT',
                             format('payment %s was recorded with another %s', x.seq, x.difference), x.seq)
                        ELSE ROW('duplicate', NULL, NULL, x.seq, NULL, NULL, NULL)::ledger.command_result END
                   WHEN l_found AND l_user IS DISTINCT FROM d->>'userId' THEN ledger.rejected('USER_INVALID',
                        format('subscription %s of store %s belongs to another user', x.lineage, x.store), x.seq)
                   WHEN l_found AND l_product IS DISTINCT FROM d->>'productId' THEN ledger.rejected('PRODUCT_INVALID',
                        format('subscription %s of store %s is for product %s, not %s', x.lineage, x.store, l_product, d->>'productId'), x.seq)
                   WHEN l_found AND l_type IS DISTINCT FROM x.type THEN ledger.rejected('PRODUCT_INVALID',
                        format('subscription %s of store %s is %s, not %s', x.lineage, x.store, l_type, x.type), x.seq)
                   ELSE ROW('recorded', NULL, NULL, x.seq, NULL, NULL, NULL)::ledger.command_result
                   END AS outcome,
                   -- A duplicate of a notification's payment links its token (and its name, unless
                   -- the name is taken: the payments' registry holds every payment's and alias's).
                   p_found AND NOT p_from_store AND p_token IS NULL AND p_field IS NULL
                       AND (p_linked IS NULL OR (x.seq <> p_seq
                                                 AND (ledger.payment_resolved(x.seq)).payment_seq IS NULL)) AS links
              FROM (SELECT d->>'paymentSeq' AS seq, d->>'storeCode' AS store, d->>'transactionId' AS txid,
                           d->>'productType' AS type, ledger.payment_lineage_id(d) AS lineage,
                           CASE WHEN p_field IS NULL THEN ledger.payment_event(d, p_from_store) END AS e,
                           CASE WHEN p_field IS NULL THEN decode(d->>'purchaseTokenSha256', 'hex') END AS token,
                           -- Only the payment of its own name, with a token, is compared field by field.
                           CASE WHEN p_field IS NULL AND p_found AND p_seq = d->>'paymentSeq' AND p_token IS NOT NULL
                                THEN ledger.payment_difference(p_seq, p_user, d) END AS difference
                    OFFSET 0) AS x
            OFFSET 0) AS o
$$;
REVOKE ALL ON FUNCTION ledger.payment_outcome(text, jsonb, boolean, text, boolean, text, text, text, numeric, bytea, bytea,
                                              boolean, text, text, text) FROM PUBLIC;
