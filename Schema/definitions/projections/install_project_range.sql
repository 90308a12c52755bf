-- project_range(from, to) and project_positions(positions) in the given schema: the one
-- definition of how each event changes the projections, run by every append (one event), by a
-- batch of commands (the positions of its events) and by a rebuild (the whole log, in ranges).
-- Both functions are made from the one body below; only the events they read differ. The step
-- that keeps entitled_spans is in ledger.entitled_spans_step (its own file), with the same
-- predicate: it defers them to the commit, or to an explicit ledger.settle_spans.
CREATE OR REPLACE FUNCTION ledger.install_project_range(target text)
RETURNS void
LANGUAGE plpgsql AS $install$
DECLARE
    v record;
BEGIN
    PERFORM ledger.install_entitled_spans(target);
    PERFORM ledger.install_lineage_states(target);
    FOR v IN VALUES
        ('project_range', 'p_from bigint, p_to bigint', 'bigint, bigint', '', 'e.position BETWEEN p_from AND p_to'),
        -- A batch's own events: other writers' events (applied by their own writers) may have
        -- committed between them. The estimate of = ANY (a few rows) keeps every statement an
        -- index probe per event, whatever the size of the log.
        ('project_positions', 'p_positions bigint[]', 'bigint[]',
         'p_from bigint := p_positions[1]; p_to bigint := p_positions[cardinality(p_positions)];',
         'e.position = ANY (p_positions)')
    LOOP
    EXECUTE format($fn$
        -- Applies the events with from <= position <= to, set-based, in one call: only the
        -- statements for the kinds of event in the range run. An append's range is one event,
        -- whose kind is read without an aggregate, and the lineage statement (a sort and a
        -- unique step even when it inserts nothing) runs only for a subscription payment.
        -- Generic plans: every statement is driven by an index range scan of ledger.events, which
        -- suits one event and a rebuild's batch alike, and replanning the six statements on each
        -- append (what custom plans for a range parameter do) would cost more than running them.
        -- No sequential scans: a session's plans are made once, on a new ledger while the tables
        -- are nearly empty, and a consume's UPDATE planned then as a scan of every payment
        -- (rescanning the events for each) grew with the ledger until autovacuum's first
        -- ANALYZE: 6,000 demo lines took 12.3 s instead of 4.5 (BENCHMARKS.md).
        -- No JIT: a generic plan's estimate for a range grows with the log (0.5 %% of it), and
        -- past jit_above_cost every append compiled its statements (about 10M events in, a
        -- consume took 4 ms instead of 0.3).
        CREATE OR REPLACE FUNCTION %1$I.%3$s(%4$s)
        RETURNS bigint
        LANGUAGE plpgsql
        SET plan_cache_mode = force_generic_plan
        SET jit = off
        SET enable_seqscan = off
        AS $body$
        DECLARE
            %6$s
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
                  FROM ledger.events e WHERE %2$s;
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
             WHERE %2$s
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
                 WHERE %2$s
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
             WHERE %2$s
               AND e.type = 'PaymentConsumed'
               AND p.payment_seq = e.data->>'paymentSeq'
               AND p.consumed_at IS NULL;
            END IF;

            IF 'PaymentRefunded' = ANY(types) THEN
            UPDATE %1$I.payments p
               SET refunded_at = e.occurred_at, refunded_position = e.position,
                   refund_reason = e.data->>'reason'
              FROM ledger.events e
             WHERE %2$s
               AND e.type = 'PaymentRefunded'
               AND p.payment_seq = e.data->>'paymentSeq'
               AND p.refunded_at IS NULL;
            END IF;

            IF 'AutoRenewCancelled' = ANY(types) THEN
            INSERT INTO %1$I.auto_renew_changes (store_code, original_transaction_id, changed_at,
                                                 auto_renewing, position)
            SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, false, e.position
              FROM ledger.events e
             WHERE %2$s
               AND e.type = 'AutoRenewCancelled';
            END IF;

            IF 'PurchasesRestored' = ANY(types) THEN
            INSERT INTO %1$I.restores (position, user_id, store_code, restored_at, recorded, item_count)
            SELECT e.position, e.data->>'userId', e.data->>'storeCode', e.occurred_at,
                   ARRAY(SELECT jsonb_array_elements_text(e.data->'recorded')),
                   jsonb_array_length(e.data->'items')
              FROM ledger.events e
             WHERE %2$s
               AND e.type = 'PurchasesRestored';
            END IF;

            IF 'NotificationReceived' = ANY(types) THEN
            INSERT INTO %1$I.notifications (store_code, notification_id, notification_type, effect, effective_at,
                                            position, outcome, parked, lineage_key, transaction_key,
                                            account_key, token_key)
            SELECT d->>'storeCode', d->>'notificationId', d->>'notificationType', d->>'effect', e.occurred_at,
                   e.position, d->>'outcome', d->>'outcome' = 'parked', d->>'originalTransactionId',
                   coalesce(d->>'transactionId', d->>'orderId'), d->>'appAccountToken',
                   decode(d->>'purchaseTokenSha256', 'hex')
              FROM ledger.events e, LATERAL (SELECT e.data AS d) x
             WHERE %2$s AND e.type = 'NotificationReceived';
            END IF;

            IF 'NotificationReleased' = ANY(types) THEN
            UPDATE %1$I.notifications n SET parked = false, released_position = e.position
              FROM ledger.events e
             WHERE %2$s AND e.type = 'NotificationReleased'
               AND n.store_code = e.data->>'storeCode' AND n.notification_id = e.data->>'notificationId';
            END IF;

            IF 'AutoRenewEnabled' = ANY(types) THEN
            INSERT INTO %1$I.auto_renew_changes (store_code, original_transaction_id, changed_at,
                                                 auto_renewing, position)
            SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, true, e.position
              FROM ledger.events e
             WHERE %2$s AND e.type = 'AutoRenewEnabled';
            END IF;

            IF 'BillingStateChanged' = ANY(types) THEN
            INSERT INTO %1$I.billing_states (store_code, original_transaction_id, changed_at, state,
                                             grace_expires_at, position)
            SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, e.data->>'state',
                   (e.data->>'gracePeriodExpiresAt')::timestamptz, e.position
              FROM ledger.events e
             WHERE %2$s AND e.type = 'BillingStateChanged';
            END IF;

            -- A reversal: the payment's refund state is its stream's last refund or reversal.
            -- (Read from the stream, so that a refund, its reversal and a new refund in one
            -- replayed range end as they did when appended one by one.)
            IF 'RefundReversed' = ANY(types) THEN
            UPDATE %1$I.payments p
               SET refunded_at        = CASE WHEN last.type = 'PaymentRefunded' THEN last.occurred_at END,
                   refunded_position  = CASE WHEN last.type = 'PaymentRefunded' THEN last.position END,
                   refund_reason      = CASE WHEN last.type = 'PaymentRefunded' THEN last.data->>'reason' END,
                   reversed_refund_at = CASE WHEN last.type = 'RefundReversed' THEN before.occurred_at END,
                   refund_reversed_at = CASE WHEN last.type = 'RefundReversed' THEN last.occurred_at END
              FROM (SELECT DISTINCT e.stream, e.data->>'paymentSeq' AS seq FROM ledger.events e
                     WHERE %2$s AND e.type = 'RefundReversed') t
              CROSS JOIN LATERAL (
                    SELECT x.type, x.occurred_at, x.position, x.data FROM ledger.events x
                     WHERE x.stream = t.stream AND x.position <= p_to
                       AND x.type IN ('PaymentRefunded', 'RefundReversed')
                     ORDER BY x.version DESC LIMIT 1) last
              LEFT JOIN LATERAL (
                    SELECT y.occurred_at FROM ledger.events y
                     WHERE y.stream = t.stream AND y.position < last.position AND y.type = 'PaymentRefunded'
                     ORDER BY y.version DESC LIMIT 1) before ON true
             WHERE p.payment_seq = t.seq;
            END IF;

            -- The newest extension (by the store's time) wins, whatever order they came in.
            IF 'ExpiryExtended' = ANY(types) THEN
            UPDATE %1$I.payments p
               SET extended_expiry_time = x.expiry_time, extended_at = x.occurred_at
              FROM (SELECT DISTINCT ON (e.data->>'paymentSeq') e.data->>'paymentSeq' AS seq,
                           (e.data->>'expiryTime')::timestamptz AS expiry_time, e.occurred_at
                      FROM ledger.events e
                     WHERE %2$s AND e.type = 'ExpiryExtended'
                     ORDER BY e.data->>'paymentSeq', e.occurred_at DESC, e.position DESC) x
             WHERE p.payment_seq = x.seq AND (p.extended_at IS NULL OR p.extended_at <= x.occurred_at);
            END IF;

            IF 'PaymentLinked' = ANY(types) THEN
            INSERT INTO %1$I.payment_aliases (alias_seq, payment_seq, position)
            SELECT e.data->>'alias', e.data->>'paymentSeq', e.position
              FROM ledger.events e
             WHERE %2$s AND e.type = 'PaymentLinked' AND e.data->>'alias' IS NOT NULL;
            UPDATE %1$I.payments p SET linked_token_sha256 = decode(e.data->>'purchaseTokenSha256', 'hex')
              FROM ledger.events e
             WHERE %2$s AND e.type = 'PaymentLinked'
               AND p.payment_seq = e.data->>'paymentSeq' AND p.linked_token_sha256 IS NULL;
            END IF;

            IF 'ProductDeclared' = ANY(types) THEN
            INSERT INTO %1$I.products (store_code, product_id, product_type, price, currency, position)
            SELECT DISTINCT ON (e.data->>'storeCode', e.data->>'productId')
                   e.data->>'storeCode', e.data->>'productId', e.data->>'productType',
                   (e.data->>'price')::numeric, e.data->>'currency', e.position
              FROM ledger.events e
             WHERE %2$s AND e.type = 'ProductDeclared'
             ORDER BY e.data->>'storeCode', e.data->>'productId', e.position DESC
            ON CONFLICT (store_code, product_id) DO UPDATE
               SET product_type = excluded.product_type, price = excluded.price, currency = excluded.currency,
                   position = excluded.position;
            END IF;

            IF 'AccountLinked' = ANY(types) THEN
            INSERT INTO %1$I.account_links (store_code, app_account_token, user_id, position)
            SELECT e.data->>'storeCode', e.data->>'appAccountToken', e.data->>'userId', e.position
              FROM ledger.events e
             WHERE %2$s AND e.type = 'AccountLinked'
            ON CONFLICT DO NOTHING;
            END IF;

            -- The entitled spans of every lineage the events touched, at the commit
            -- (ledger.entitled_spans_step).
            %7$s

            RETURN applied;
        END
        $body$;
        REVOKE ALL ON FUNCTION %1$I.%3$s(%5$s) FROM PUBLIC;
    $fn$, target, v.column5, v.column1, v.column2, v.column3, v.column4,
       ledger.entitled_spans_step(target, v.column5));
    END LOOP;
END
$install$;
REVOKE ALL ON FUNCTION ledger.install_project_range(text) FROM PUBLIC;
