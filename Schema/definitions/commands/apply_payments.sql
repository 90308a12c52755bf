-- Records a batch of purchases and renewals, set-based: the one definition of the payment rules
-- (docs/contract.md §2.1, §3), for a single payment (a batch of one: record_payment_core) as for the
-- library's batches (record_payments), a restore's items and a store notification's payment.
-- p_items: [{"kind": "purchase" | "renewal", "data": {the payment command}, "job": {…}}, ...]
-- (the §2.1 fields under their contract names, the token as purchaseTokenSha256), checked
-- against ledger.field_rules; each event's data is what ledger.payment_event builds. "job"
-- (optional: {kind, purpose, args, secret}, ledger.add_job) is written when the item is recorded.
-- p_from_store: the payments come from a verified store notification (no purchase token; a
-- duplicate of any payment already recorded for their store transaction).
-- Returns one result per item, in input order. Each item is atomic on its own: a refused item
-- writes nothing and the others apply.
--
-- How: every item's keys are locked at once, in the ledger's one order (lock_keys). Then rounds:
-- a round holds every pending item that is the first pending one with each of its keys, so
-- items that share a payment, store transaction or token keep their input order and the items
-- of one round are independent; items of one lineage may share a round, whose statement reads
-- the lineage the first of them defines. Per round, one statement checks every item against
-- the rules and the projections and decides its outcome; one statement appends the accepted
-- events (hash chain included); project_positions applies exactly those events; then the parked
-- notifications that a new payment releases are applied.
-- An SDK line for a payment first learned from a notification, with the same user, product and
-- price, is a duplicate that makes its paymentSeq and token name that payment (PaymentLinked).
CREATE OR REPLACE FUNCTION ledger.apply_payments(p_items jsonb, p_from_store boolean)
RETURNS SETOF ledger.command_result
-- Generic plans: every statement is driven by the batch's arrays and index probes, which suits
-- a batch of one and of a thousand alike; custom plans would plan these statements again on
-- every call (a batch of one spent 15 ms planning them, against 2 ms running them).
-- No sequential scans: a session's plans are made once, often while the tables are still
-- nearly empty, and a scan of the lineages chosen then grew with the ledger (30,000 lines of
-- the demo ingested at 480 lines/s instead of 1,800; BENCHMARKS.md).
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    -- The items as an array (each read once from the jsonb), and the payment rules in order.
    v_items     jsonb[] := ARRAY(SELECT value FROM jsonb_array_elements(p_items));
    v_rules     ledger.field_rules[] := ARRAY(SELECT r FROM ledger.field_rules r WHERE scope = 'payment' ORDER BY position);
    v_results   ledger.command_result[] := array_fill(NULL::ledger.command_result, ARRAY[jsonb_array_length(p_items)]);
    v_pending   integer[] := ARRAY(SELECT generate_series(1, jsonb_array_length(p_items)));
    v_round     integer[];
    v_outcomes  ledger.command_result[];
    v_ords      integer[];
    a_streams   text[];
    a_types     text[];
    a_data      jsonb[];
    a_times     timestamptz[];
    v_positions bigint[];
    w           record;
    v_parked    boolean;
    -- Whether an item brings a job (a Google payment from a line, docs/contract.md §6.3).
    v_jobs      boolean := EXISTS (SELECT FROM unnest(v_items) AS item WHERE item ? 'job');
BEGIN
    PERFORM ledger.lock_keys(ARRAY(SELECT unnest(ledger.payment_lock_keys(item->'data')) FROM unnest(v_items) AS item));
    -- Whether a notification is parked: none can be parked while this runs (releases only
    -- apply them), so without one now the rounds below need not look again.
    v_parked := EXISTS (SELECT FROM ledger.notifications WHERE parked);
    WHILE cardinality(v_pending) > 0 LOOP
        -- The round: each pending item that comes first, among the pending ones, with each of
        -- its keys (an item without any key, which its check refuses, goes at once). Items of
        -- one lineage may share a round (the rule statement below reads the lineage that the
        -- first of them defines), as long as every earlier pending item of that lineage is in it
        -- too; not while a notification is parked, since releasing one reads the lineage's
        -- payments between items.
        -- (IF, not CASE: a CASE would still start the executor of the set statement for a
        -- set of one, and starting it costs more than running it on one item.)
        IF cardinality(v_pending) = 1 THEN
            v_round := v_pending;
        ELSE
            v_round := ARRAY(
                SELECT ord FROM (
                    SELECT ord, lineage, ready,
                           bool_and(ready) OVER (PARTITION BY lineage ORDER BY ord) AS lineage_ready
                      FROM (SELECT ord,
                                   bool_and(k IS NULL OR ord = first OR (NOT v_parked AND k LIKE 'lineage:%')) AS ready,
                                   max(k) FILTER (WHERE k LIKE 'lineage:%') AS lineage
                              FROM (SELECT ord, k, min(ord) OVER (PARTITION BY k) AS first
                                      FROM unnest(v_pending) AS ord
                                      LEFT JOIN LATERAL unnest(ledger.payment_lock_keys(v_items[ord]->'data')) AS k
                                             ON k IS NOT NULL) keyed
                             GROUP BY ord) items) prefixed
                 WHERE ready AND (lineage IS NULL OR lineage_ready) ORDER BY ord);
        END IF;
        IF cardinality(v_round) = cardinality(v_pending) THEN
            v_pending := '{}';
        ELSE
            v_pending := ARRAY(SELECT unnest(v_pending) EXCEPT SELECT unnest(v_round) ORDER BY 1);
        END IF;

        -- Every item's outcome, and the event it appends (a new payment, or a link).
        WITH items AS MATERIALIZED (
            SELECT ord, v_items[ord]->>'kind' AS kind, d, d->>'paymentSeq' AS seq, d->>'storeCode' AS store,
                   d->>'transactionId' AS txid, d->>'productType' AS type,
                   ledger.payment_lineage_id(d) AS lineage
              FROM unnest(v_round) AS ord, LATERAL (SELECT v_items[ord]->'data' AS d) x
        ), checked AS MATERIALIZED (
            -- The first field that breaks its rule, in the rules' order, then the rules between
            -- fields. A payment from a store notification has no token: a stand-in takes its place.
            SELECT items.*,
                   coalesce((SELECT r.field FROM unnest(v_rules) AS r
                              WHERE ledger.field_invalid(r, checkable) LIMIT 1),
                            ledger.payment_fields_invalid(d),
                            -- The kind, and a renewal's lineage, as the library reads a line.
                            CASE WHEN kind IS DISTINCT FROM 'purchase' AND kind IS DISTINCT FROM 'renewal' THEN 'kind'
                                 WHEN kind = 'renewal' AND d->>'originalTransactionId' IS NULL THEN 'originalTransactionId' END)
                   AS field
              FROM items,
                   LATERAL (SELECT CASE WHEN p_from_store AND d->>'purchaseTokenSha256' IS NULL
                                        THEN d || jsonb_build_object('purchaseTokenSha256', repeat('0', 64))
                                        ELSE d END AS checkable) x
        ), looked AS MATERIALIZED (
            SELECT c.*,
                   CASE WHEN c.field IS NULL THEN ledger.payment_event(c.d, p_from_store) END AS e,
                   CASE WHEN c.field IS NULL THEN decode(c.d->>'purchaseTokenSha256', 'hex') END AS token,
                   CASE WHEN p.payment_seq = c.seq AND p.token_sha256 IS NOT NULL
                        THEN ledger.payment_difference(c.seq, c.d) END AS difference,
                   p.payment_seq AS p_seq, p.user_id AS p_user, p.product_id AS p_product, p.price AS p_price,
                   p.token_sha256 AS p_token, p.linked_token_sha256 AS p_linked, p.payment_seq IS NOT NULL AS p_found,
                   l.user_id AS t_user, l.product_id AS t_product, l.product_type AS t_type, l.user_id IS NOT NULL AS t_found
              FROM checked c
              -- The payment by its name, else another payment holding the same store transaction.
              LEFT JOIN LATERAL (
                    (SELECT payment_seq, user_id, product_id, price, token_sha256, linked_token_sha256
                       FROM ledger.payments WHERE payment_seq = c.seq)
                    UNION ALL
                    (SELECT payment_seq, user_id, product_id, price, token_sha256, linked_token_sha256
                       FROM ledger.payments WHERE store_code = c.store AND transaction_id = c.txid)
                    LIMIT 1) p ON c.field IS NULL
              LEFT JOIN LATERAL (
                    SELECT user_id, product_id, product_type FROM ledger.lineages
                     WHERE store_code = c.store AND original_transaction_id = c.lineage) l ON c.field IS NULL
        ), first_of_lineage AS MATERIALIZED (
            -- A lineage not recorded yet is defined by the round's first item of it that will
            -- be recorded (no broken field, no payment of its name or transaction), as it would
            -- be one item at a time; project_range records that item's lineage row.
            SELECT lk.*, min(lk.ord) FILTER (WHERE lk.field IS NULL AND NOT lk.p_found AND NOT lk.t_found
                                                 AND lk.lineage IS NOT NULL)
                           OVER (PARTITION BY lk.store, lk.lineage) AS definer
              FROM looked lk
        ), lined AS MATERIALIZED (
            SELECT f.*,
                   CASE WHEN f.definer < f.ord THEN df.d->>'userId' ELSE f.t_user END AS l_user,
                   CASE WHEN f.definer < f.ord THEN df.d->>'productId' ELSE f.t_product END AS l_product,
                   CASE WHEN f.definer < f.ord THEN df.type ELSE f.t_type END AS l_type,
                   f.t_found OR f.definer < f.ord AS l_found
              FROM first_of_lineage f
              LEFT JOIN first_of_lineage df ON df.ord = f.definer AND f.definer < f.ord
        ), decided AS MATERIALIZED (
            SELECT ord, seq, e, p_seq, p_user, token,
                   CASE
                   WHEN field IS NOT NULL THEN ledger.rejected('INVALID_INPUT',
                        format('payment %s: %s is missing or invalid', coalesce(seq, '(no paymentSeq)'), field), seq)
                   WHEN p_found AND p_from_store THEN ROW('duplicate', NULL, NULL, p_seq, NULL, NULL, NULL)::ledger.command_result
                   -- First learned from a store notification.
                   WHEN p_found AND p_token IS NULL THEN CASE
                        WHEN p_user IS DISTINCT FROM d->>'userId' THEN
                             ledger.rejected('USER_INVALID', format('payment %s belongs to another user', seq), seq)
                        WHEN p_product IS DISTINCT FROM d->>'productId' THEN ledger.rejected('PRODUCT_INVALID',
                             format('payment %s was recorded for product %s, not %s', seq, p_product, d->>'productId'), seq)
                        WHEN p_price IS DISTINCT FROM (d->>'price')::numeric THEN ledger.rejected('PAYMENT_CONFLICT',
                             format('transaction %s of store %s was recorded from the store with price %s', txid, store, p_price), seq)
                        WHEN p_linked IS NOT NULL AND NOT ledger.digest_equal(p_linked, token) THEN ledger.rejected('PAYMENT_CONFLICT',
                             format('transaction %s of store %s was recorded with another purchaseToken', txid, store), seq)
                        ELSE ROW('duplicate', NULL, NULL, seq, NULL, NULL, NULL)::ledger.command_result END
                   WHEN p_found AND p_seq <> seq THEN ledger.rejected('PAYMENT_CONFLICT',
                        format('transaction %s of store %s is already recorded as payment %s', txid, store, p_seq), seq)
                   WHEN p_found THEN CASE
                        WHEN p_user IS DISTINCT FROM d->>'userId' THEN
                             ledger.rejected('USER_INVALID', format('payment %s belongs to another user', seq), seq)
                        WHEN p_product IS DISTINCT FROM d->>'productId' THEN ledger.rejected('PRODUCT_INVALID',
                             format('payment %s was recorded for product %s, not %s', seq, p_product, d->>'productId'), seq)
                        WHEN difference IS NOT NULL THEN ledger.rejected('PAYMENT_CONFLICT',
                             format('payment %s was recorded with another %s', seq, difference), seq)
                        ELSE ROW('duplicate', NULL, NULL, seq, NULL, NULL, NULL)::ledger.command_result END
                   WHEN l_found AND l_user IS DISTINCT FROM d->>'userId' THEN ledger.rejected('USER_INVALID',
                        format('subscription %s of store %s belongs to another user', lineage, store), seq)
                   WHEN l_found AND l_product IS DISTINCT FROM d->>'productId' THEN ledger.rejected('PRODUCT_INVALID',
                        format('subscription %s of store %s is for product %s, not %s', lineage, store, l_product, d->>'productId'), seq)
                   WHEN l_found AND l_type IS DISTINCT FROM type THEN ledger.rejected('PRODUCT_INVALID',
                        format('subscription %s of store %s is %s, not %s', lineage, store, l_type, type), seq)
                   ELSE ROW('recorded', NULL, NULL, seq, NULL, NULL, NULL)::ledger.command_result
                   END AS outcome,
                   -- A duplicate of a notification's payment links its token (and its name).
                   p_found AND NOT p_from_store AND p_token IS NULL AND field IS NULL
                       AND (p_linked IS NULL OR (seq <> p_seq AND NOT EXISTS (
                               SELECT FROM ledger.payment_aliases WHERE alias_seq = seq))) AS links,
                   kind
              FROM lined
        ), appended AS (
            SELECT ord, outcome,
                   CASE WHEN (outcome).status = 'recorded' THEN 'payment:' || seq
                        WHEN (outcome).status = 'duplicate' AND links THEN 'payment:' || p_seq END AS stream,
                   CASE WHEN (outcome).status = 'recorded'
                        THEN CASE kind WHEN 'renewal' THEN 'RenewalRecorded' ELSE 'PurchaseRecorded' END
                        ELSE 'PaymentLinked' END AS type,
                   CASE WHEN (outcome).status = 'recorded' THEN e
                        ELSE jsonb_build_object('paymentSeq', p_seq, 'userId', p_user,
                                                'alias', CASE WHEN seq <> p_seq THEN seq END,
                                                'purchaseTokenSha256', e->>'purchaseTokenSha256') END AS data,
                   CASE WHEN (outcome).status = 'recorded' THEN (e->>'purchaseTime')::timestamptz ELSE now() END AS at
              FROM decided
        )
        SELECT array_agg(ord), array_agg(outcome),
               array_agg(stream) FILTER (WHERE stream IS NOT NULL),
               array_agg(type) FILTER (WHERE stream IS NOT NULL),
               array_agg(data) FILTER (WHERE stream IS NOT NULL),
               array_agg(at) FILTER (WHERE stream IS NOT NULL)
          INTO v_ords, v_outcomes, a_streams, a_types, a_data, a_times
          FROM (SELECT * FROM appended ORDER BY ord) ordered;
        FOR i IN 1 .. cardinality(v_ords) LOOP
            v_results[v_ords[i]] := v_outcomes[i];
        END LOOP;
        CONTINUE WHEN a_streams IS NULL;

        -- The accepted events, appended in input order, each chained to its stream's head. A
        -- new payment's stream is new; a link's stream (the notification's payment) may be
        -- written by a consume of another name at the same time, so its head is locked first.
        v_positions := ledger.append_set(a_streams, a_types, a_data, a_times, 'PaymentLinked' = ANY (a_types));
        PERFORM ledger.project_positions(v_positions);

        -- A recorded payment's job (reading the purchase to acknowledge it), written with the
        -- payment and caused by its event; its purchase token, which the store's API needs, is
        -- kept in the job only. A duplicate brings none: the first record's job stands.
        IF v_jobs THEN
            PERFORM ledger.add_job((v_items[o]->'job') - 'secret', v_items[o]->'job'->>'secret', p)
               -- (unnest of several arrays spreads a composite into its columns)
               FROM unnest(v_ords, v_outcomes) AS x(o, status, code, message, seq)
               JOIN unnest(a_streams, v_positions) AS s(stream, p) ON s.stream = 'payment:' || x.seq
              WHERE x.status = 'recorded' AND v_items[o] ? 'job';
        END IF;

        -- A new payment releases the parked notifications that were waiting for it.
        IF v_parked AND EXISTS (SELECT FROM ledger.notifications WHERE parked) THEN
            FOR w IN
                SELECT d->>'storeCode' AS store, d->>'transactionId' AS txid,
                       ledger.payment_lineage_id(d) AS lineage,
                       CASE WHEN d->>'storeCode' = 'GG' THEN decode(d->>'purchaseTokenSha256', 'hex') END AS token
                  FROM unnest(a_types, a_data) WITH ORDINALITY AS a(type, d, n)
                 WHERE type <> 'PaymentLinked' ORDER BY n
            LOOP
                IF EXISTS (SELECT FROM ledger.notifications WHERE parked AND store_code = w.store) THEN
                    PERFORM ledger.release_parked(w.store, w.lineage, w.txid, NULL, w.token);
                END IF;
            END LOOP;
        END IF;
    END LOOP;
    RETURN QUERY SELECT status, code, message, payment_seq, consumed_at, recorded, payments
                   FROM unnest(v_results) WITH ORDINALITY
                        AS x(status, code, message, payment_seq, consumed_at, recorded, payments, n)
                  ORDER BY n;
END
$$;
REVOKE ALL ON FUNCTION ledger.apply_payments(jsonb, boolean) FROM PUBLIC;
