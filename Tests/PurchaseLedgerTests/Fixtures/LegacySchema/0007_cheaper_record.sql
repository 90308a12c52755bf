-- Cheaper record and consume commands, found by profiling the backend under `pgbench` and `ledger-bench`
-- (perf, pg_stat_statements with track = all; BENCHMARKS.md has the figures):
--
-- 1. The CHECK constraint payments_valid (0002) is replaced by the same rules checked on the
--    event's data before anything is appended. The server re-reads a CHECK expression from its
--    catalog text for every statement that inserts a row (about 6 % of a record's CPU), while
--    an expression in a PL/pgSQL function is prepared once per session. The event log now never
--    holds a payment that breaks the rules, and a direct caller gets INVALID_INPUT naming the
--    field instead of a constraint violation.
-- 2. record_payment was an SQL-language wrapper, whose body the server parses and plans again on
--    every call; it is now PL/pgSQL, whose plans are cached per session.
-- 3. SQL functions that the planner could not inline ran through the SQL-function executor on
--    every call, which reads the body back from its catalog text and plans it each time:
--    event_hash (every append) and payload_bytes (every payment projected) were declared
--    IMMUTABLE but use STABLE functions (extract from timestamptz, convert_to), and the planner
--    only inlines a function whose body is no less stable than its declaration. They are STABLE
--    now (which they are), so they are inlined into the statements that call them.
--    digest_equal (every consume) had a subquery, which no planner inlines: it now compares the
--    SHA-256 of both digests with bytea equality, which stops at the first differing byte of
--    values the caller cannot choose, so its timing tells nothing about the stored digest.
-- 4. The payment is looked up by its name, then (only when absent) by its store transaction:
--    two index probes instead of a BitmapOr, a sort and a limit.
-- 5. project_range runs two statements fewer for the single event of an append (below), and
--    with jit = off: ledger-bench at 10M events found every consume compiling its UPDATE,
--    because the generic plan's estimate for a position range grows with the log and passed
--    jit_above_cost (a 12x slowdown of ingest, 7.5M events in). The command functions get
--    jit = off too: none of their statements reads more than a few rows.
-- 6. payment_difference (every duplicate record: each retry of a purchase) was an SQL function
--    with a string body, parsed, analysed and planned on every call (about 1M instructions,
--    as much as recording a new payment); it is PL/pgSQL now, with the same body.

ALTER FUNCTION ledger.event_hash(bytea, text, integer, text, timestamptz, jsonb) STABLE;
ALTER FUNCTION ledger.payload_bytes(jsonb) STABLE;

-- Whether two token digests are equal; false (never null) for a missing or empty digest.
CREATE OR REPLACE FUNCTION ledger.digest_equal(a bytea, b bytea) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(length(a) > 0 AND length(a) = length(b) AND sha256(a) = sha256(b), false);

-- The first field in which a payment event differs from the recorded payment, or null.
-- (Projection tables are only ever named inside string bodies, which resolve names when they
-- run: a rebuild swaps the tables, and a parsed body would keep pointing at the old ones.
-- PL/pgSQL plans are dropped when a table they use is, and planned again by name.)
CREATE OR REPLACE FUNCTION ledger.payment_difference(p_seq text, d jsonb) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (
        SELECT CASE
            WHEN p.store_code IS DISTINCT FROM d->>'storeCode' THEN 'storeCode'
            WHEN p.product_type IS DISTINCT FROM d->>'productType' THEN 'productType'
            WHEN p.price IS DISTINCT FROM (d->>'price')::numeric THEN 'price'
            WHEN p.currency IS DISTINCT FROM d->>'currency' THEN 'currency'
            WHEN p.transaction_id IS DISTINCT FROM d->>'transactionId' THEN 'transactionId'
            WHEN coalesce(p.original_transaction_id, p.transaction_id)
                 IS DISTINCT FROM coalesce(d->>'originalTransactionId', d->>'transactionId') THEN 'originalTransactionId'
            WHEN p.purchase_time IS DISTINCT FROM (d->>'purchaseTime')::timestamptz THEN 'purchaseTime'
            WHEN p.expiry_time IS DISTINCT FROM (d->>'expiryTime')::timestamptz THEN 'expiryTime'
            WHEN p.payload IS DISTINCT FROM ledger.payload_bytes(d) THEN 'payload'
            WHEN p.sandbox_payment IS DISTINCT FROM (d->>'sandboxPayment')::boolean THEN 'sandboxPayment'
            WHEN p.promotion_payment IS DISTINCT FROM (d->>'promotionPayment')::boolean THEN 'promotionPayment'
            WHEN p.product_seq IS DISTINCT FROM (d->>'productSeq')::bigint THEN 'productSeq'
            WHEN NOT ledger.digest_equal(p.token_sha256, decode(d->>'purchaseTokenSha256', 'hex')) THEN 'purchaseToken'
        END
        FROM ledger.payments p WHERE p.payment_seq = p_seq);
END
$$;

-- The first field of a payment event that breaks the ledger's rules, or null: what the library
-- validates (Sources/PurchaseLedger/Commands), checked again for direct callers.
CREATE FUNCTION ledger.payment_invalid_field(d jsonb) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE
    WHEN coalesce(d->>'paymentSeq', '') = '' THEN 'paymentSeq'
    WHEN coalesce(d->>'userId', '') = '' THEN 'userId'
    WHEN coalesce(d->>'storeCode', '') NOT IN ('AS', 'GG') THEN 'storeCode'
    WHEN coalesce(d->>'productId', '') = '' THEN 'productId'
    WHEN coalesce(d->>'productType', '') NOT IN ('CONSUMABLE', 'AUTO_RENEWABLE', 'CONSUMABLE_AUTO_RENEWABLE')
        THEN 'productType'
    -- Digits with an optional fraction; no regular expressions here, they cost more than the
    -- rest of the check together.
    WHEN translate(coalesce(d->>'price', '.'), '0123456789', '') NOT IN ('', '.')
         OR left(d->>'price', 1) = '.' OR right(d->>'price', 1) = '.' THEN 'price'
    WHEN length(coalesce(d->>'currency', '')) <> 3
         OR translate(d->>'currency', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '') <> '' THEN 'currency'
    WHEN coalesce(d->>'transactionId', '') = '' THEN 'transactionId'
    WHEN length(coalesce(d->>'purchaseTokenSha256', '')) <> 64
         OR translate(d->>'purchaseTokenSha256', '0123456789abcdefABCDEF', '') <> '' THEN 'purchaseToken'
    WHEN jsonb_typeof(d->'sandboxPayment') IS DISTINCT FROM 'boolean' THEN 'sandboxPayment'
    WHEN jsonb_typeof(d->'promotionPayment') IS DISTINCT FROM 'boolean' THEN 'promotionPayment'
    WHEN d->>'purchaseTime' IS NULL THEN 'purchaseTime'
    WHEN d->>'productType' <> 'CONSUMABLE'
         AND NOT coalesce((d->>'expiryTime')::timestamptz > (d->>'purchaseTime')::timestamptz, false)
        THEN 'expiryTime'
END;

-- Records a purchase or a renewal (p_kind 'purchase' | 'renewal'); d is the event's data.
CREATE OR REPLACE FUNCTION ledger.record_payment_in_tx(p_kind text, d jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    v_seq     text := d->>'paymentSeq';
    v_store   text := d->>'storeCode';
    v_txid    text := d->>'transactionId';
    v_type    text := d->>'productType';
    v_lineage text := CASE WHEN d->>'productType' <> 'CONSUMABLE'
                           THEN coalesce(d->>'originalTransactionId', d->>'transactionId') END;
    p         record;
    l         record;
    v_field   text;
    v_pos     bigint;
BEGIN
    v_field := ledger.payment_invalid_field(d);
    IF v_field IS NOT NULL THEN
        RETURN ledger.rejected('INVALID_INPUT',
            format('payment %s: %s is missing or invalid', coalesce(v_seq, '(no paymentSeq)'), v_field), v_seq);
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('payment:' || v_seq, 0)),
            pg_advisory_xact_lock(hashtextextended('transaction:' || v_store || ':' || v_txid, 0)),
            pg_advisory_xact_lock(hashtextextended('lineage:' || v_store || ':' || coalesce(v_lineage, v_txid), 0));

    -- The payment by its name, else another payment holding the same store transaction.
    SELECT payment_seq, user_id, product_id INTO p FROM ledger.payments WHERE payment_seq = v_seq;
    IF NOT FOUND THEN
        SELECT payment_seq, user_id, product_id INTO p FROM ledger.payments
         WHERE store_code = v_store AND transaction_id = v_txid;
    END IF;
    IF FOUND AND p.payment_seq <> v_seq THEN
        RETURN ledger.rejected('PAYMENT_CONFLICT',
            format('transaction %s of store %s is already recorded as payment %s', v_txid, v_store, p.payment_seq), v_seq);
    ELSIF FOUND THEN
        IF p.user_id IS DISTINCT FROM d->>'userId' THEN
            RETURN ledger.rejected('USER_INVALID', format('payment %s belongs to another user', v_seq), v_seq);
        ELSIF p.product_id IS DISTINCT FROM d->>'productId' THEN
            RETURN ledger.rejected('PRODUCT_INVALID',
                format('payment %s was recorded for product %s, not %s', v_seq, p.product_id, d->>'productId'), v_seq);
        END IF;
        v_field := ledger.payment_difference(v_seq, d);
        IF v_field IS NOT NULL THEN
            RETURN ledger.rejected('PAYMENT_CONFLICT',
                format('payment %s was recorded with another %s', v_seq, v_field), v_seq);
        END IF;
        RETURN ROW('duplicate', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    END IF;

    IF v_lineage IS NOT NULL THEN
        SELECT user_id, product_id, product_type INTO l FROM ledger.lineages
         WHERE store_code = v_store AND original_transaction_id = v_lineage;
        IF FOUND THEN
            IF l.user_id IS DISTINCT FROM d->>'userId' THEN
                RETURN ledger.rejected('USER_INVALID',
                    format('subscription %s of store %s belongs to another user', v_lineage, v_store), v_seq);
            ELSIF l.product_id IS DISTINCT FROM d->>'productId' THEN
                RETURN ledger.rejected('PRODUCT_INVALID',
                    format('subscription %s of store %s is for product %s, not %s',
                           v_lineage, v_store, l.product_id, d->>'productId'), v_seq);
            ELSIF l.product_type IS DISTINCT FROM v_type THEN
                RETURN ledger.rejected('PRODUCT_INVALID',
                    format('subscription %s of store %s is %s, not %s', v_lineage, v_store, l.product_type, v_type), v_seq);
            END IF;
        END IF;
    END IF;

    v_pos := ledger.append('payment:' || v_seq,
                           CASE p_kind WHEN 'renewal' THEN 'RenewalRecorded' ELSE 'PurchaseRecorded' END,
                           d, (d->>'purchaseTime')::timestamptz, 0);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
END
$$;

CREATE OR REPLACE FUNCTION ledger.record_payment(p_kind text, d jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN ledger.record_payment_in_tx(p_kind, d);
END
$$;

-- project_range as 0002 defined it, with two statements fewer for a single event: an append's
-- one event has its kind read without an aggregate and a sort, and the lineage statement (a
-- sort and a unique step even when it inserts nothing) runs only for subscription payments.
CREATE FUNCTION ledger.install_project_range(target text)
RETURNS void
LANGUAGE plpgsql AS $install$
BEGIN
    EXECUTE format($fn$
        -- Applies the events with from <= position <= to, set-based, in one call (0002's
        -- definition, which runs only the statements for the kinds of event in the range; since
        -- 0007 it reads a single event's kind without an aggregate, and skips the lineage
        -- statement unless the range holds a subscription payment).
        -- Generic plans: every statement is driven by an index range scan of ledger.events, which
        -- suits one event and a rebuild's batch alike, and replanning the six statements on each
        -- append (what custom plans for a range parameter do) would cost more than running them.
        -- No JIT: a generic plan's estimate for a range grows with the log (0.5 %% of it), and
        -- past jit_above_cost every append compiled its statements (about 10M events in, a
        -- consume took 4 ms instead of 0.3).
        CREATE OR REPLACE FUNCTION %1$I.project_range(p_from bigint, p_to bigint)
        RETURNS bigint
        LANGUAGE plpgsql
        SET plan_cache_mode = force_generic_plan
        SET jit = off
        AS $body$
        DECLARE
            applied bigint := 0;
            types   text[];
            subscriptions boolean;
        BEGIN
            -- Which kinds of event the range holds (only their statements run) and whether it
            -- holds a subscription payment. An append's range is one event: read it directly.
            IF p_from = p_to THEN
                SELECT ARRAY[e.type],
                       e.type IN ('PurchaseRecorded', 'RenewalRecorded') AND e.data->>'productType' <> 'CONSUMABLE'
                  INTO types, subscriptions
                  FROM ledger.events e WHERE e.position = p_from;
            ELSE
                SELECT coalesce(array_agg(DISTINCT e.type), '{}'),
                       coalesce(bool_or(e.type IN ('PurchaseRecorded', 'RenewalRecorded')
                                        AND e.data->>'productType' <> 'CONSUMABLE'), false)
                  INTO types, subscriptions
                  FROM ledger.events e WHERE e.position BETWEEN p_from AND p_to;
            END IF;

            IF types && ARRAY['PurchaseRecorded', 'RenewalRecorded'] THEN
            INSERT INTO %1$I.payments (
                payment_seq, user_id, store_code, product_id, product_type, price, currency,
                transaction_id, original_transaction_id, lineage_id, purchase_time, expiry_time,
                payload, sandbox_payment, promotion_payment, product_seq, token_sha256, kind,
                recorded_position, recorded_at)
            SELECT d->>'paymentSeq', d->>'userId', d->>'storeCode', d->>'productId', d->>'productType',
                   (d->>'price')::numeric, d->>'currency', d->>'transactionId', d->>'originalTransactionId',
                   CASE WHEN d->>'productType' <> 'CONSUMABLE'
                        THEN coalesce(d->>'originalTransactionId', d->>'transactionId') END,
                   (d->>'purchaseTime')::timestamptz, (d->>'expiryTime')::timestamptz,
                   ledger.payload_bytes(d),
                   (d->>'sandboxPayment')::boolean, (d->>'promotionPayment')::boolean,
                   (d->>'productSeq')::bigint, decode(d->>'purchaseTokenSha256', 'hex'),
                   CASE e.type WHEN 'RenewalRecorded' THEN 'renewal' ELSE 'purchase' END,
                   e.position, e.recorded_at
              FROM ledger.events e, LATERAL (SELECT e.data AS d) x
             WHERE e.position BETWEEN p_from AND p_to
               AND e.type IN ('PurchaseRecorded', 'RenewalRecorded');
            GET DIAGNOSTICS applied = ROW_COUNT;

            IF subscriptions THEN
                INSERT INTO %1$I.lineages (store_code, original_transaction_id, user_id, product_id,
                                           product_type, first_position)
                SELECT DISTINCT ON (store, lineage) store, lineage, d->>'userId', d->>'productId',
                       d->>'productType', e.position
                  FROM ledger.events e,
                       LATERAL (SELECT e.data AS d, e.data->>'storeCode' AS store,
                                       coalesce(e.data->>'originalTransactionId', e.data->>'transactionId') AS lineage) x
                 WHERE e.position BETWEEN p_from AND p_to
                   AND e.type IN ('PurchaseRecorded', 'RenewalRecorded')
                   AND d->>'productType' <> 'CONSUMABLE'
                 ORDER BY store, lineage, e.position
                ON CONFLICT DO NOTHING;
            END IF;
            END IF;

            IF 'PaymentConsumed' = ANY(types) THEN
            UPDATE %1$I.payments p
               SET consumed_at = e.occurred_at, consumed_position = e.position
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to
               AND e.type = 'PaymentConsumed'
               AND p.payment_seq = e.data->>'paymentSeq'
               AND p.consumed_at IS NULL;
            END IF;

            IF 'PaymentRefunded' = ANY(types) THEN
            UPDATE %1$I.payments p
               SET refunded_at = e.occurred_at, refunded_position = e.position,
                   refund_reason = e.data->>'reason'
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to
               AND e.type = 'PaymentRefunded'
               AND p.payment_seq = e.data->>'paymentSeq'
               AND p.refunded_at IS NULL;
            END IF;

            IF 'AutoRenewCancelled' = ANY(types) THEN
            INSERT INTO %1$I.auto_renew_changes (store_code, original_transaction_id, changed_at,
                                                 auto_renewing, position)
            SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, false, e.position
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to
               AND e.type = 'AutoRenewCancelled';
            END IF;

            IF 'PurchasesRestored' = ANY(types) THEN
            INSERT INTO %1$I.restores (position, user_id, store_code, restored_at, recorded, item_count)
            SELECT e.position, e.data->>'userId', e.data->>'storeCode', e.occurred_at,
                   ARRAY(SELECT jsonb_array_elements_text(e.data->'recorded')),
                   jsonb_array_length(e.data->'items')
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to
               AND e.type = 'PurchasesRestored';
            END IF;

            RETURN applied;
        END
        $body$;
        REVOKE ALL ON FUNCTION %1$I.project_range(bigint, bigint) FROM PUBLIC;
    $fn$, target);
END
$install$;

-- Projections made from now on (a rebuild's shadow tables) get the same: the 0002 definition
-- stays as it is, under another name, and the new one drops the CHECK and replaces
-- project_range after it.
ALTER FUNCTION ledger.install_projections(text) RENAME TO install_projections_0002;

CREATE FUNCTION ledger.install_projections(target text)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger.install_projections_0002(target);
    EXECUTE format('ALTER TABLE %I.payments DROP CONSTRAINT payments_valid', target);
    PERFORM ledger.install_project_range(target);
END
$$;

ALTER TABLE ledger.payments DROP CONSTRAINT payments_valid;
SELECT ledger.install_project_range('ledger');
REVOKE ALL ON FUNCTION ledger.install_projections(text), ledger.install_project_range(text) FROM PUBLIC;

-- No JIT in the command functions (see 5. above).
ALTER FUNCTION ledger.record_payment(text, jsonb) SET jit = off;
ALTER FUNCTION ledger.consume(text, text, bytea, timestamptz) SET jit = off;
ALTER FUNCTION ledger.refund(text, timestamptz, text) SET jit = off;
ALTER FUNCTION ledger.cancel(text, text, timestamptz) SET jit = off;
ALTER FUNCTION ledger.restore(text, text, timestamptz, jsonb) SET jit = off;
