-- Records a batch of purchases and renewals, set-based (docs/contract.md §2.1, §3): the
-- library's batches (record_payments), a restore's items. A batch of one item is that payment
-- alone (ledger.apply_payment). Both apply the one definition of the payment rules:
-- ledger.payment_refused_field and ledger.payment_outcome. The payment and the lineage an item
-- meets are found as ledger.payment_found and ledger.lineage_found find one payment's, for a
-- round at once (below); SetEngineTests holds a batch to the outcomes of its commands one at a
-- time.
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
    -- The items as an array (each read once from the jsonb).
    v_items     jsonb[] := ARRAY(SELECT value FROM jsonb_array_elements(p_items));
    v_results   ledger.command_result[];
    v_pending   integer[];
    v_round     integer[];
    r_seqs      text[];      -- per item of the round: the payment it meets, and its owner
    r_owners    text[];
    r_lineage_owners text[]; -- the owner of its lineage, for an item meeting no payment
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
    v_jobs      boolean;
BEGIN
    -- A payment alone takes the path without the set's machinery (same rules).
    IF cardinality(v_items) = 1 THEN
        RETURN NEXT ledger.apply_payment(v_items[1]->>'kind', v_items[1]->'data', p_from_store, v_items[1]->'job');
        RETURN;
    END IF;
    v_results := array_fill(NULL::ledger.command_result, ARRAY[cardinality(v_items)]);
    v_pending := ARRAY(SELECT generate_series(1, cardinality(v_items)));
    v_jobs := EXISTS (SELECT FROM unnest(v_items) AS item WHERE item ? 'job');
    PERFORM ledger.lock_keys(ARRAY(SELECT unnest(ledger.payment_lock_keys(item->'data')) FROM unnest(v_items) AS item));
    -- On a Citus cluster (a distributed log), the items one at a time, in input order, each as a
    -- payment alone: a round's statements join the items with the registries and the owners'
    -- rows, which Citus does not plan, and a set of one owner's items under custom plans would
    -- plan them again on every call, more than a batch's items cost one at a time
    -- (docs/scale-out.md, "Sets run on a distributed ledger"). The outcomes are the set's
    -- (SetEngineTests), and the set's keys are held already, in the one order.
    IF ledger.distributed_log() THEN
        FOR i IN 1 .. cardinality(v_items) LOOP
            RETURN NEXT ledger.apply_payment(v_items[i]->>'kind', v_items[i]->'data', p_from_store, v_items[i]->'job');
        END LOOP;
        RETURN;
    END IF;
    -- Whether a notification is parked: none can be parked while this runs (releases only
    -- apply them), so without one now the rounds below need not look again.
    v_parked := EXISTS (SELECT FROM ledger.notifications WHERE user_id = '' AND parked);
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

        -- The owners of the round's keys, each registry asked for all of them in one statement, as
        -- ledger.payment_found and ledger.lineage_found ask for one item's: the payment of the
        -- item's own name (payment_keys), else of its store transaction (transaction_keys), and for
        -- an item meeting no payment, its lineage's owner (lineage_keys). The round's statement
        -- reads those owners' rows. On a cluster a registry's rows and an owner's live on
        -- different nodes, and one statement does not join them; on one server, per item, a
        -- function of its own per lookup cost 7 % more instructions than these statements
        -- (BENCHMARKS.md, "The commands' lookups on a distributed ledger").
        SELECT array_agg(k.names_seq ORDER BY i.n), array_agg(k.user_id ORDER BY i.n) INTO r_seqs, r_owners
          FROM unnest(v_round) WITH ORDINALITY AS i(ord, n)
          LEFT JOIN ledger.payment_keys k
                 ON k.payment_seq = v_items[i.ord]->'data'->>'paymentSeq' AND k.names_seq = k.payment_seq;
        IF array_position(r_seqs, NULL) IS NOT NULL THEN
            SELECT array_agg(coalesce(r_seqs[i.n], k.payment_seq) ORDER BY i.n),
                   array_agg(coalesce(r_owners[i.n], k.user_id) ORDER BY i.n) INTO r_seqs, r_owners
              FROM unnest(v_round) WITH ORDINALITY AS i(ord, n)
              LEFT JOIN ledger.transaction_keys k
                     ON r_seqs[i.n] IS NULL AND k.store_code = v_items[i.ord]->'data'->>'storeCode'
                    AND k.transaction_id = v_items[i.ord]->'data'->>'transactionId';
            SELECT array_agg(k.user_id ORDER BY i.n) INTO r_lineage_owners
              FROM unnest(v_round) WITH ORDINALITY AS i(ord, n)
              LEFT JOIN ledger.lineage_keys k
                     ON r_seqs[i.n] IS NULL AND k.store_code = v_items[i.ord]->'data'->>'storeCode'
                    AND k.lineage_id = ledger.payment_lineage_id(v_items[i.ord]->'data');
        ELSE
            r_lineage_owners := '{}';
        END IF;

        -- Every item's outcome, and the event it appends (a new payment, or a link).
        WITH items AS MATERIALIZED (
            SELECT ord, v_items[ord]->>'kind' AS kind, d, d->>'paymentSeq' AS seq, d->>'storeCode' AS store,
                   d->>'transactionId' AS txid, d->>'productType' AS type,
                   ledger.payment_lineage_id(d) AS lineage, found_seq, found_owner, lineage_owner
              FROM unnest(v_round, r_seqs, r_owners, r_lineage_owners) AS i(ord, found_seq, found_owner, lineage_owner),
                   LATERAL (SELECT v_items[ord]->'data' AS d) x
        ), checked AS MATERIALIZED (
            SELECT items.*, f.field FROM items CROSS JOIN LATERAL ledger.payment_refused_field(kind, d, p_from_store, ledger.payment_rules()) AS f
        ), looked AS MATERIALIZED (
            SELECT c.*,
                   p.payment_seq AS p_seq, p.user_id AS p_user, p.product_id AS p_product, p.price AS p_price,
                   p.token_sha256 AS p_token, p.linked_token_sha256 AS p_linked, p.payment_seq IS NOT NULL AS p_found,
                   l.user_id AS t_user, l.product_id AS t_product, l.product_type AS t_type, l.user_id IS NOT NULL AS t_found
              FROM checked c
              LEFT JOIN ledger.payments p
                     ON c.field IS NULL AND p.payment_seq = c.found_seq AND p.user_id = c.found_owner
              LEFT JOIN ledger.lineages l
                     ON c.field IS NULL AND l.store_code = c.store AND l.original_transaction_id = c.lineage
                    AND l.user_id = c.lineage_owner
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
        ), appended AS (
            SELECT ln.ord, o.outcome, o.stream, o.type, o.data, o.at
              FROM lined ln
             CROSS JOIN LATERAL ledger.payment_outcome(
                        ln.kind, ln.d, p_from_store, ln.field,
                        ln.p_found, ln.p_seq, ln.p_user, ln.p_product, ln.p_price, ln.p_token, ln.p_linked,
                        ln.l_found, ln.l_user, ln.l_product, ln.l_type) AS o
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
        -- Their owner, when the set has one (on a cluster, the one shard its statements go to).
        PERFORM ledger.project_positions(v_positions, ledger.sole_owner(a_data));

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
        IF v_parked AND EXISTS (SELECT FROM ledger.notifications WHERE user_id = '' AND parked) THEN
            FOR w IN
                SELECT d FROM unnest(a_types, a_data) WITH ORDINALITY AS a(type, d, n)
                 WHERE type <> 'PaymentLinked' ORDER BY n
            LOOP
                PERFORM ledger.release_parked_by_payment(w.d);
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
