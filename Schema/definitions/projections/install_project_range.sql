-- project_positions(positions) and project_range(from, to) in the given schema: the one
-- definition of how each event changes the projections, run by every command (the positions of
-- its own events) and by a rebuild or a catch-up (the log in ranges of positions). The step
-- that keeps entitled_spans and lineage_states is the last statement of the body: it defers
-- them to the commit, or to an explicit ledger.settle_spans (entitled_spans_step.sql).
--
-- Static SQL: the body is written out once, below, as project_positions. It is the same text in
-- every schema it is installed in (the live `ledger`, a rebuild's shadow): the installer puts
-- the target first on search_path and creates the functions there with SET search_path FROM
-- CURRENT, so that each unqualified name of the body (payments, lineages, …) is a projection
-- table of the function's own schema, and current_schema() is that schema. Everything else is
-- qualified (ledger.events, ledger.defer_spans, ledger.payment_lineage_id, …): the path holds
-- no other schema of ours, so a table missing from a shadow fails instead of reaching the live
-- one. pg_temp is last, where no temporary table can stand in for a projection table.
--
-- project_range is the same body with another event predicate, and a function of its own
-- because each statement of a PL/pgSQL function keeps one generic plan, which the two callers
-- cannot share: a command's positions (`e.position = ANY (p_positions)`, and their owner,
-- estimated at a few rows whatever the size of the log) need an index probe per event; a
-- replay's range of up to 250,000 events (`e.position BETWEEN p_from AND p_to`, estimated at
-- 0.5 % of the log) needs the joins of a range. A predicate accepting either gives both callers
-- one estimate, and a range spelled as its positions would make a replay descend the index once
-- per event. So project_range is made from project_positions' own text
-- (pg_proc.prosrc) by the only template left, four named replacements checked below: the
-- bounds project_positions declares from its array (project_range has them as parameters), its
-- predicate, the owner named again on a table joined to the events, which a range drops, and
-- how the keys are claimed (one by one for a command, set-based for a replay: the comment at
-- claims_one_by_one says why).
-- (On a Citus cluster a join with the events does not tell which shards of the other table to
-- read: a statement names the owner on each table, or it reads and locks every shard.)
CREATE OR REPLACE FUNCTION ledger.install_project_range(target text)
RETURNS void
LANGUAGE plpgsql
-- The caller's search_path comes back at exit (the body sets the target's).
SET search_path = pg_catalog, pg_temp
AS $install$
DECLARE
    -- project_positions' text that project_range replaces: the bounds line and the predicate.
    v_bounds    constant text := 'p_from bigint := p_positions[1]; p_to bigint := p_positions[cardinality(p_positions)];';
    v_positions constant text := 'e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)';
    v_range     constant text := 'e.position BETWEEN p_from AND p_to';
    -- project_positions' filter on a table joined to the events (a regular expression): the
    -- owner again, which project_range, reading every owner's events of its range, drops.
    v_joined    constant text := ' AND \(p_owner IS NULL OR [a-z]+\.user_id = p_owner\)';
    -- How project_positions claims keys (one by one), and how project_range does (set-based).
    v_one_by_one constant text := 'claims_one_by_one constant boolean := true;';
    v_set_based  constant text := 'claims_one_by_one constant boolean := false;';
    v_body      text;
BEGIN
    PERFORM ledger.install_entitled_spans(target);
    PERFORM ledger.install_lineage_states(target);
    PERFORM set_config('search_path', format('%I, pg_catalog, pg_temp', target), true);

    -- Applies the events at these positions (ascending), set-based, in one call: only the
    -- statements for the kinds of event among them run. A command's own events: other writers'
    -- events (applied by their own writers) may have committed between them. An append's one
    -- event has its kind read without an aggregate, and the lineage statement (a sort and a
    -- unique step even when it inserts nothing) runs only for a subscription payment.
    -- Generic plans: every statement is driven by an index scan of ledger.events, which suits one
    -- event and a rebuild's batch alike, and replanning the statements on each append (what
    -- custom plans do) would cost more than running them.
    -- No sequential scans: a session's plans are made once, on a new ledger while the tables
    -- are nearly empty, and a consume's UPDATE planned then as a scan of every payment
    -- (rescanning the events for each) grew with the ledger until autovacuum's first
    -- ANALYZE: 6,000 demo lines took 12.3 s instead of 4.5 (BENCHMARKS.md).
    -- No JIT: a generic plan's estimate for a range grows with the log (0.5 % of it), and
    -- past jit_above_cost every append compiled its statements (about 10M events in, a
    -- consume took 4 ms instead of 0.3).
    -- p_owner: the owner of all those events (a command's user, a set's when it has one), or
    -- null when they have several. Every statement reads the log by position and, given one, by
    -- owner: on a Citus cluster the owner names the one shard that holds the events and their
    -- rows, where a statement that names none goes to every shard (docs/scale-out.md). Not an
    -- array of owners: under one server's generic plans `= ANY` compares each row with every
    -- owner of a set, 5 % more instructions per payment of a set (BENCHMARKS.md).
    -- A database made before the owners were named may hold project_positions(bigint[]): dropped
    -- here.
    DROP FUNCTION IF EXISTS project_positions(bigint[]);
    CREATE OR REPLACE FUNCTION project_positions(p_positions bigint[], p_owner text)
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
    SET plan_cache_mode = force_generic_plan
    SET jit = off
    SET enable_seqscan = off
    AS $body$
    DECLARE
        -- project_positions' first and last event (project_range has them as parameters).
        p_from bigint := p_positions[1]; p_to bigint := p_positions[cardinality(p_positions)];
        applied bigint := 0;
        types   text[];
        subscriptions boolean;
        span_stores   text[];
        span_lineages text[];
        span_owners   text[];
        span_since    timestamptz[];
        span_flags    boolean[];
        product       record;
        released      record;
        parked_row    record;
        claim         record;
        -- How the keys are claimed: by a command one by one, each an INSERT … VALUES of its own
        -- (project_positions); by a replay collected into these arrays and written by one
        -- INSERT … SELECT per registry after each kind of event (project_range, where the
        -- installer makes this false: below). On a Citus cluster a claim of a command must be a
        -- router insert (the comment at the payments' claims says why), and a replay's hundreds
        -- of thousands of them would be one round trip each from the coordinator, most of a
        -- verify's time; the replay's INSERT … SELECT writes each registry's shards in parallel,
        -- in the 2PC (nothing in a replay reads a registry's shard before writing it).
        -- Either way the same rows are claimed, in the order of the log.
        claims_one_by_one constant boolean := true;
        -- (Null until a replay collects: an initial value would cost every command's call its
        -- evaluation. A null array || an element is that element's array.)
        ck_seq   text[]; ck_user text[]; ck_position bigint[];
        ck_store text[]; ck_key  text[]; ck_token    bytea[];
        token_taken_at bigint[];   -- positions of payments whose token was taken (below)
        token_claimed  bytea;
    BEGIN
        -- Which kinds of event there are (only their statements run) and whether there is a
        -- subscription payment. An append's one event is read directly.
        IF p_from = p_to THEN
            SELECT ARRAY[e.type],
                   e.type IN ('PurchaseRecorded', 'RenewalRecorded') AND e.data->>'productType' <> 'CONSUMABLE'
              INTO types, subscriptions
              FROM ledger.events e WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner);
        ELSE
            SELECT coalesce(array_agg(DISTINCT e.type), '{}'),
                   coalesce(bool_or(e.type IN ('PurchaseRecorded', 'RenewalRecorded')
                                    AND e.data->>'productType' <> 'CONSUMABLE'), false)
              INTO types, subscriptions
              FROM ledger.events e WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner);
        END IF;

        -- A payment claims its paymentSeq and its store transaction in their registries, and a
        -- Google payment its purchase token (the first payment that has it: the first in the
        -- order of the log, unless the events say otherwise); a subscription's first payment its
        -- lineage.
        -- Each claim is a statement of its own with the key as a value, not an INSERT … SELECT
        -- from the payments inserted: on a Citus cluster a claim so written is a router insert
        -- on the key's shard, which Citus prepares with the rest of the transaction. Citus runs
        -- an INSERT … SELECT through the coordinator as a COPY into the shard, and a COPY over
        -- a connection that has only read that shard in the transaction (the command asks the
        -- registries for the key's owner first) ends in a plain COMMIT after the other
        -- workers' COMMIT PREPARED: a crash between them keeps a payment and loses its claim
        -- (docs/scale-out.md, "A purchase's claims in its 2PC").
        IF types && ARRAY['PurchaseRecorded', 'RenewalRecorded'] THEN
        FOR claim IN
        WITH recorded AS (
        INSERT INTO payments (
            payment_seq, user_id, store_code, product_id, product_type, price, currency,
            transaction_id, original_transaction_id, lineage_id, purchase_time, expiry_time,
            payload, sandbox_payment, promotion_payment, product_seq, token_sha256, kind,
            recorded_position, recorded_at)
        SELECT d->>'paymentSeq', d->>'userId', d->>'storeCode', d->>'productId', d->>'productType',
               (d->>'price')::numeric, d->>'currency', d->>'transactionId', d->>'originalTransactionId',
               ledger.payment_lineage_id(d),
               (d->>'purchaseTime')::timestamptz, (d->>'expiryTime')::timestamptz,
               ledger.payload_bytes(d),
               (d->>'sandboxPayment')::boolean, (d->>'promotionPayment')::boolean,
               (d->>'productSeq')::bigint, decode(d->>'purchaseTokenSha256', 'hex'),
               CASE e.type WHEN 'RenewalRecorded' THEN 'renewal' ELSE 'purchase' END,
               e.position, e.recorded_at
          FROM ledger.events e, LATERAL (SELECT e.data AS d) x
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
           AND e.type IN ('PurchaseRecorded', 'RenewalRecorded')
        RETURNING payment_seq, user_id, store_code, transaction_id, recorded_position, token_sha256)
        SELECT * FROM recorded ORDER BY recorded_position
        LOOP
            applied := applied + 1;
            -- A Google payment claims its token unless its event says that the token was another
            -- payment's already when it was recorded (ledger.payment_token_claim): the
            -- registry's row is that one's, whichever of the two a replay meets first. The marks
            -- are read once, at the first token: where commands run on the workers only, where
            -- the payments write them. On one server the payment that took the token holds the
            -- lower position (the later one waited for its key's lock), and the order of the log
            -- gives the answer. (A position is unique across the cluster's nodes.)
            IF claim.store_code = 'GG' AND claim.token_sha256 IS NOT NULL AND token_taken_at IS NULL THEN
                token_taken_at := '{}';
                IF ledger.commands_on_workers() THEN
                    token_taken_at := ARRAY(
                        SELECT e.position FROM ledger.events e
                         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
                           AND e.type IN ('PurchaseRecorded', 'RenewalRecorded') AND e.data ? 'purchaseTokenClaimed');
                END IF;
            END IF;
            token_claimed := CASE WHEN claim.store_code = 'GG' AND NOT claim.recorded_position = ANY (token_taken_at)
                                  THEN claim.token_sha256 END;
            IF claims_one_by_one THEN
                INSERT INTO payment_keys (payment_seq, user_id, position, names_seq)
                VALUES (claim.payment_seq, claim.user_id, claim.recorded_position, claim.payment_seq);
                INSERT INTO transaction_keys (store_code, transaction_id, user_id, position, payment_seq)
                VALUES (claim.store_code, claim.transaction_id, claim.user_id, claim.recorded_position, claim.payment_seq);
                IF token_claimed IS NOT NULL THEN
                    INSERT INTO token_keys (token_sha256, user_id, position)
                    VALUES (token_claimed, claim.user_id, claim.recorded_position)
                    ON CONFLICT DO NOTHING;
                END IF;
            ELSE
                ck_seq := ck_seq || claim.payment_seq; ck_user := ck_user || claim.user_id;
                ck_position := ck_position || claim.recorded_position;
                ck_store := ck_store || claim.store_code; ck_key := ck_key || claim.transaction_id;
                ck_token := ck_token || token_claimed;
            END IF;
        END LOOP;
        IF NOT claims_one_by_one THEN
            INSERT INTO payment_keys (payment_seq, user_id, position, names_seq)
            SELECT c.seq, c.user_id, c.position, c.seq
              FROM unnest(ck_seq, ck_user, ck_position) AS c(seq, user_id, position);
            INSERT INTO transaction_keys (store_code, transaction_id, user_id, position, payment_seq)
            SELECT c.store_code, c.transaction_id, c.user_id, c.position, c.seq
              FROM unnest(ck_store, ck_key, ck_user, ck_position, ck_seq) AS c(store_code, transaction_id, user_id, position, seq);
            -- The first payment of the log that has the token (the loop meets them in its order).
            INSERT INTO token_keys (token_sha256, user_id, position)
            SELECT DISTINCT ON (c.token) c.token, c.user_id, c.position
              FROM unnest(ck_token, ck_user, ck_position) AS c(token, user_id, position)
             WHERE c.token IS NOT NULL
             ORDER BY c.token, c.position
            ON CONFLICT DO NOTHING;
            ck_seq := NULL; ck_user := NULL; ck_position := NULL; ck_store := NULL; ck_key := NULL; ck_token := NULL;
        END IF;

        IF subscriptions THEN
            FOR claim IN
            WITH new_lineages AS (
            INSERT INTO lineages (store_code, original_transaction_id, user_id, product_id,
                                  product_type, first_position)
            SELECT DISTINCT ON (store, lineage) store, lineage, d->>'userId', d->>'productId',
                   d->>'productType', e.position
              FROM ledger.events e,
                   LATERAL (SELECT e.data AS d, e.data->>'storeCode' AS store,
                                   ledger.lineage_id(e.data->>'originalTransactionId', e.data->>'transactionId') AS lineage) x
             WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
               AND e.type IN ('PurchaseRecorded', 'RenewalRecorded')
               AND d->>'productType' <> 'CONSUMABLE'
               -- Not a payment whose event says its lineage is begun already (where commands run
               -- on the workers, ledger.apply_payment): the lineage's first payment is then the
               -- one unmarked, whatever the positions say. One server writes no mark, and
               -- the constant folds the test away.
               AND (NOT ledger.commands_on_workers() OR NOT d ? 'lineageClaimed')
             ORDER BY store, lineage, e.position
            ON CONFLICT DO NOTHING
            RETURNING store_code, original_transaction_id, user_id, first_position)
            SELECT * FROM new_lineages ORDER BY first_position
            LOOP
                IF claims_one_by_one THEN
                    INSERT INTO lineage_keys (store_code, lineage_id, user_id, position)
                    VALUES (claim.store_code, claim.original_transaction_id, claim.user_id, claim.first_position);
                ELSE
                    ck_store := ck_store || claim.store_code; ck_key := ck_key || claim.original_transaction_id;
                    ck_user := ck_user || claim.user_id; ck_position := ck_position || claim.first_position;
                END IF;
            END LOOP;
            IF NOT claims_one_by_one THEN
                INSERT INTO lineage_keys (store_code, lineage_id, user_id, position)
                SELECT * FROM unnest(ck_store, ck_key, ck_user, ck_position);
                ck_store := NULL; ck_key := NULL; ck_user := NULL; ck_position := NULL;
            END IF;
        END IF;
        END IF;

        IF 'PaymentConsumed' = ANY(types) THEN
        UPDATE payments p
           SET consumed_at = e.occurred_at, consumed_position = e.position
          FROM ledger.events e
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
           AND e.type = 'PaymentConsumed'
           AND p.user_id = e.user_id AND (p_owner IS NULL OR p.user_id = p_owner) AND p.payment_seq = e.data->>'paymentSeq'
           AND p.consumed_at IS NULL;
        END IF;

        IF 'PaymentRefunded' = ANY(types) THEN
        UPDATE payments p
           SET refunded_at = e.occurred_at, refunded_position = e.position,
               refund_reason = e.data->>'reason'
          FROM ledger.events e
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
           AND e.type = 'PaymentRefunded'
           AND p.user_id = e.user_id AND (p_owner IS NULL OR p.user_id = p_owner) AND p.payment_seq = e.data->>'paymentSeq'
           AND p.refunded_at IS NULL;
        END IF;

        IF 'AutoRenewCancelled' = ANY(types) THEN
        INSERT INTO auto_renew_changes (store_code, original_transaction_id, changed_at, auto_renewing, position, user_id)
        SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, false, e.position, e.user_id
          FROM ledger.events e
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
           AND e.type = 'AutoRenewCancelled';
        END IF;

        IF 'PurchasesRestored' = ANY(types) THEN
        INSERT INTO restores (position, user_id, store_code, restored_at, recorded, item_count)
        SELECT e.position, e.data->>'userId', e.data->>'storeCode', e.occurred_at,
               ARRAY(SELECT jsonb_array_elements_text(e.data->'recorded')),
               jsonb_array_length(e.data->'items')
          FROM ledger.events e
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
           AND e.type = 'PurchasesRestored';
        END IF;

        IF 'NotificationReceived' = ANY(types) THEN
        FOR claim IN
        WITH received AS (
        INSERT INTO notifications (store_code, notification_id, notification_type, effect, effective_at,
                                   position, outcome, parked, lineage_key, transaction_key,
                                   account_key, token_key, user_id)
        SELECT d->>'storeCode', d->>'notificationId', d->>'notificationType', d->>'effect', e.occurred_at,
               e.position, d->>'outcome', d->>'outcome' = 'parked', d->>'originalTransactionId',
               coalesce(d->>'transactionId', d->>'orderId'), d->>'appAccountToken',
               decode(d->>'purchaseTokenSha256', 'hex'), e.user_id
          FROM ledger.events e, LATERAL (SELECT e.data AS d) x
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'NotificationReceived'
        RETURNING store_code, notification_id, user_id, position)
        SELECT * FROM received ORDER BY position
        LOOP
            -- Its claim a router insert, as a payment's are (above), or a replay's in one statement.
            IF claims_one_by_one THEN
                INSERT INTO notification_keys (store_code, notification_id, user_id, position)
                VALUES (claim.store_code, claim.notification_id, claim.user_id, claim.position);
            ELSE
                ck_store := ck_store || claim.store_code; ck_key := ck_key || claim.notification_id;
                ck_user := ck_user || claim.user_id; ck_position := ck_position || claim.position;
            END IF;
        END LOOP;
        IF NOT claims_one_by_one THEN
            INSERT INTO notification_keys (store_code, notification_id, user_id, position)
            SELECT * FROM unnest(ck_store, ck_key, ck_user, ck_position);
            ck_store := NULL; ck_key := NULL; ck_user := NULL; ck_position := NULL;
        END IF;
        END IF;

        -- A release moves the parked notification to its user, as ledger.release_parked moves
        -- its stream: the row is deleted under '' and inserted under the release's owner (a
        -- distributed row does not change its key), a row at a time as products are below, and
        -- each release read first: on a cluster the parked row and the release live with
        -- different owners, which one statement cannot join. Releases are rare.
        IF 'NotificationReleased' = ANY(types) THEN
        FOR released IN
            SELECT e.position, e.user_id AS owner, e.data->>'storeCode' AS store_code,
                   e.data->>'notificationId' AS notification_id
              FROM ledger.events e
             WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'NotificationReleased'
             ORDER BY e.position
        LOOP
            DELETE FROM notifications n
             WHERE n.user_id = '' AND n.store_code = released.store_code AND n.notification_id = released.notification_id
            RETURNING n.* INTO parked_row;
            CONTINUE WHEN NOT FOUND;
            INSERT INTO notifications (store_code, notification_id, notification_type, effect, effective_at,
                                       position, outcome, parked, released_position, lineage_key,
                                       transaction_key, account_key, token_key, user_id)
            VALUES (parked_row.store_code, parked_row.notification_id, parked_row.notification_type, parked_row.effect,
                    parked_row.effective_at, parked_row.position, parked_row.outcome, false, released.position,
                    parked_row.lineage_key, parked_row.transaction_key, parked_row.account_key, parked_row.token_key,
                    released.owner);
            UPDATE notification_keys SET user_id = released.owner
             WHERE store_code = released.store_code AND notification_id = released.notification_id;
        END LOOP;
        END IF;

        IF 'AutoRenewEnabled' = ANY(types) THEN
        INSERT INTO auto_renew_changes (store_code, original_transaction_id, changed_at, auto_renewing, position, user_id)
        SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, true, e.position, e.user_id
          FROM ledger.events e
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'AutoRenewEnabled';
        END IF;

        IF 'BillingStateChanged' = ANY(types) THEN
        INSERT INTO billing_states (store_code, original_transaction_id, changed_at, state,
                                    grace_expires_at, position, user_id)
        SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, e.data->>'state',
               (e.data->>'gracePeriodExpiresAt')::timestamptz, e.position, e.user_id
          FROM ledger.events e
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'BillingStateChanged';
        END IF;

        -- A reversal: the payment's refund state is its stream's last refund or reversal.
        -- (Read from the stream, so that a refund, its reversal and a new refund in one
        -- replayed range end as they did when appended one by one.)
        IF 'RefundReversed' = ANY(types) THEN
        UPDATE payments p
           SET refunded_at        = CASE WHEN last.type = 'PaymentRefunded' THEN last.occurred_at END,
               refunded_position  = CASE WHEN last.type = 'PaymentRefunded' THEN last.position END,
               refund_reason      = CASE WHEN last.type = 'PaymentRefunded' THEN last.data->>'reason' END,
               reversed_refund_at = before.occurred_at,
               refund_reversed_at = rev.occurred_at
          FROM (SELECT DISTINCT e.stream, e.user_id, e.data->>'paymentSeq' AS seq FROM ledger.events e
                 WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'RefundReversed') t
          -- The stream's last refund or reversal so far says whether it stands refunded; its last
          -- reversal and the refund before that say which window was undone (a refund after
          -- the reversal, in the same range of a replay, leaves that window as the live path does).
          CROSS JOIN LATERAL (
                SELECT x.type, x.occurred_at, x.position, x.data FROM ledger.events x
                 WHERE x.user_id = t.user_id AND (p_owner IS NULL OR x.user_id = p_owner) AND x.stream = t.stream AND x.position <= p_to
                   AND x.type IN ('PaymentRefunded', 'RefundReversed')
                 ORDER BY x.version DESC LIMIT 1) last
          CROSS JOIN LATERAL (
                SELECT x.occurred_at, x.position FROM ledger.events x
                 WHERE x.user_id = t.user_id AND (p_owner IS NULL OR x.user_id = p_owner) AND x.stream = t.stream
                   AND x.position <= p_to AND x.type = 'RefundReversed'
                 ORDER BY x.version DESC LIMIT 1) rev
          LEFT JOIN LATERAL (
                SELECT y.occurred_at FROM ledger.events y
                 WHERE y.user_id = t.user_id AND (p_owner IS NULL OR y.user_id = p_owner) AND y.stream = t.stream
                   AND y.position < rev.position AND y.type = 'PaymentRefunded'
                 ORDER BY y.version DESC LIMIT 1) before ON true
         WHERE p.user_id = t.user_id AND (p_owner IS NULL OR p.user_id = p_owner) AND p.payment_seq = t.seq;
        END IF;

        -- The newest extension (by the store's time) wins, whatever order they came in.
        IF 'ExpiryExtended' = ANY(types) THEN
        UPDATE payments p
           SET extended_expiry_time = x.expiry_time, extended_at = x.occurred_at
          FROM (SELECT DISTINCT ON (e.data->>'paymentSeq') e.data->>'paymentSeq' AS seq, e.user_id,
                       (e.data->>'expiryTime')::timestamptz AS expiry_time, e.occurred_at
                  FROM ledger.events e
                 WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'ExpiryExtended'
                 ORDER BY e.data->>'paymentSeq', e.occurred_at DESC, e.position DESC) x
         WHERE p.user_id = x.user_id AND (p_owner IS NULL OR p.user_id = p_owner) AND p.payment_seq = x.seq
           AND (p.extended_at IS NULL OR p.extended_at <= x.occurred_at);
        END IF;

        IF 'PaymentLinked' = ANY(types) THEN
        FOR claim IN
        WITH aliases AS (
        INSERT INTO payment_aliases (alias_seq, payment_seq, position, user_id)
        SELECT e.data->>'alias', e.data->>'paymentSeq', e.position, e.user_id
          FROM ledger.events e
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'PaymentLinked' AND e.data->>'alias' IS NOT NULL
        RETURNING alias_seq, payment_seq, user_id, position)
        SELECT * FROM aliases ORDER BY position
        LOOP
            -- The alias claims its paymentSeq, as a payment's claims are (above).
            IF claims_one_by_one THEN
                INSERT INTO payment_keys (payment_seq, user_id, position, names_seq)
                VALUES (claim.alias_seq, claim.user_id, claim.position, claim.payment_seq);
            ELSE
                ck_key := ck_key || claim.alias_seq; ck_user := ck_user || claim.user_id;
                ck_position := ck_position || claim.position; ck_seq := ck_seq || claim.payment_seq;
            END IF;
        END LOOP;
        IF NOT claims_one_by_one THEN
            INSERT INTO payment_keys (payment_seq, user_id, position, names_seq)
            SELECT * FROM unnest(ck_key, ck_user, ck_position, ck_seq);
            ck_key := NULL; ck_user := NULL; ck_position := NULL; ck_seq := NULL;
        END IF;
        UPDATE payments p SET linked_token_sha256 = decode(e.data->>'purchaseTokenSha256', 'hex')
          FROM ledger.events e
         WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'PaymentLinked'
           AND p.user_id = e.user_id AND (p_owner IS NULL OR p.user_id = p_owner) AND p.payment_seq = e.data->>'paymentSeq'
           AND p.linked_token_sha256 IS NULL;
        END IF;

        -- A row at a time: on Citus products is a reference table, and Citus plans no
        -- INSERT … SELECT into one under a generic plan's parameters. Products are few.
        -- A product's latest declaration is the one of the highest version of its stream, which
        -- orders its declarations wherever they ran; positions order only one node's appends (a
        -- declaration on a worker, then another through the coordinator, holds the higher
        -- position: docs/scale-out.md, "A decision the replay cannot remake across nodes").
        IF 'ProductDeclared' = ANY(types) THEN
        FOR product IN
            SELECT DISTINCT ON (e.data->>'storeCode', e.data->>'productId')
                   e.data->>'storeCode' AS store_code, e.data->>'productId' AS product_id,
                   e.data->>'productType' AS product_type, (e.data->>'price')::numeric AS price,
                   e.data->>'currency' AS currency, e.position
              FROM ledger.events e
             WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'ProductDeclared'
             ORDER BY e.data->>'storeCode', e.data->>'productId', e.version DESC
        LOOP
            INSERT INTO products (store_code, product_id, product_type, price, currency, position)
            VALUES (product.store_code, product.product_id, product.product_type, product.price,
                    product.currency, product.position)
            ON CONFLICT (store_code, product_id) DO UPDATE
               SET product_type = excluded.product_type, price = excluded.price, currency = excluded.currency,
                   position = excluded.position;
        END LOOP;
        END IF;

        -- An account link is a registry row (keyed by the account token): a router insert each,
        -- as a payment's claims are (above), in the order of the log (the first link stands).
        IF 'AccountLinked' = ANY(types) THEN
        FOR claim IN
            SELECT e.data->>'storeCode' AS store_code, e.data->>'appAccountToken' AS app_account_token,
                   e.data->>'userId' AS user_id, e.position
              FROM ledger.events e
             WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner) AND e.type = 'AccountLinked'
             ORDER BY e.position
        LOOP
            INSERT INTO account_links (store_code, app_account_token, user_id, position)
            VALUES (claim.store_code, claim.app_account_token, claim.user_id, claim.position)
            ON CONFLICT DO NOTHING;
        END LOOP;
        END IF;

        -- The step of entitled_spans and lineage_states (entitled_spans_step.sql): every lineage
        -- the events touched, with its owner, the earliest instant they changed (a payment counts
        -- from its purchase time; a billing or auto-renew change from its own time) and whether
        -- its spans change (not for an auto-renew change alone), deferred to the commit.
        IF subscriptions OR types && ARRAY['PaymentRefunded', 'RefundReversed', 'ExpiryExtended', 'BillingStateChanged',
                                           'AutoRenewCancelled', 'AutoRenewEnabled'] THEN
            SELECT coalesce(array_agg(t.store_code), '{}'), coalesce(array_agg(t.lineage_id), '{}'),
                   coalesce(array_agg(t.user_id), '{}'),
                   coalesce(array_agg(t.since), '{}'), coalesce(array_agg(t.spans), '{}')
              INTO span_stores, span_lineages, span_owners, span_since, span_flags
              FROM (SELECT e.data->>'storeCode' AS store_code,
                           ledger.lineage_id(e.data->>'originalTransactionId', e.data->>'transactionId') AS lineage_id,
                           e.user_id, (e.data->>'purchaseTime')::timestamptz AS since, true AS spans
                      FROM ledger.events e
                     WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
                       AND e.type IN ('PurchaseRecorded', 'RenewalRecorded')
                       AND e.data->>'productType' <> 'CONSUMABLE'
                    UNION ALL
                    SELECT p.store_code, p.lineage_id, p.user_id, p.purchase_time, true
                      FROM ledger.events e
                      JOIN payments p ON p.user_id = e.user_id AND (p_owner IS NULL OR p.user_id = p_owner)
                                     AND p.payment_seq = e.data->>'paymentSeq'
                     WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
                       AND e.type IN ('PaymentRefunded', 'RefundReversed', 'ExpiryExtended')
                       AND p.lineage_id IS NOT NULL
                    UNION ALL
                    SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.user_id, e.occurred_at,
                           e.type = 'BillingStateChanged'
                      FROM ledger.events e
                     WHERE e.position = ANY (p_positions) AND (p_owner IS NULL OR e.user_id = p_owner)
                       AND e.type IN ('BillingStateChanged', 'AutoRenewCancelled', 'AutoRenewEnabled')) t;

            PERFORM ledger.defer_spans(current_schema(), span_stores, span_lineages, span_owners, span_since, span_flags);
        END IF;

        RETURN applied;
    END
    $body$;
    REVOKE ALL ON FUNCTION project_positions(bigint[], text) FROM PUBLIC;

    -- Applies the events with from <= position <= to: project_positions' body, with the range's
    -- bounds and predicate (see the top of this file).
    SELECT replace(regexp_replace(replace(replace(p.prosrc, v_bounds, ''), v_positions, v_range), v_joined, '', 'g'),
                   v_one_by_one, v_set_based) INTO v_body
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = target AND p.proname = 'project_positions';
    IF strpos(v_body, 'p_positions') > 0 OR strpos(v_body, 'p_owner') > 0 THEN
        RAISE EXCEPTION 'install_project_range: project_positions names p_positions or p_owner other than as %, in % or as %',
                        v_bounds, v_positions, v_joined;
    END IF;
    IF strpos(v_body, v_set_based) = 0 THEN
        RAISE EXCEPTION 'install_project_range: project_positions does not declare %', v_one_by_one;
    END IF;
    EXECUTE format($fn$
        CREATE OR REPLACE FUNCTION project_range(p_from bigint, p_to bigint)
        RETURNS bigint
        LANGUAGE plpgsql
        SET search_path FROM CURRENT
        SET plan_cache_mode = force_generic_plan
        SET jit = off
        SET enable_seqscan = off
        AS %L
    $fn$, v_body);
    REVOKE ALL ON FUNCTION project_range(bigint, bigint) FROM PUBLIC;
    IF (SELECT count(*) <> 2 OR count(DISTINCT p.proconfig) <> 1
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = target AND p.proname IN ('project_positions', 'project_range')) THEN
        RAISE EXCEPTION 'install_project_range: project_range and project_positions run with different settings';
    END IF;
    -- On a Citus cluster where the log is distributed, custom plans: Citus plans no INSERT …
    -- SELECT from the log into a distributed table under a generic plan's parameters, and under
    -- a custom plan the owner is a constant, which names the shard each statement reads and
    -- writes (docs/scale-out.md). The statements are the same.
    IF ledger.distributed_log() THEN
        ALTER FUNCTION project_positions(bigint[], text) SET plan_cache_mode = force_custom_plan;
        ALTER FUNCTION project_range(bigint, bigint) SET plan_cache_mode = force_custom_plan;
        ALTER FUNCTION refresh_spans(text[], text[], text[]) SET plan_cache_mode = force_custom_plan;
        ALTER FUNCTION refresh_states(text[], text[], timestamptz[], text[]) SET plan_cache_mode = force_custom_plan;
    END IF;
END
$install$;
REVOKE ALL ON FUNCTION ledger.install_project_range(text) FROM PUBLIC;
