-- The projections, defined once. ledger.install_projections(schema) creates the projection
-- tables and the function that applies events to them, project_range(from, to), in the given
-- schema: 'ledger' for the live projections (below), another schema for a rebuild's shadow
-- copy. Appends call ledger.project_range(position, position) for the event they just wrote;
-- a rebuild calls <shadow>.project_range over the whole log in batches: the same statements.

-- The payload of a payment event as bytes (see the comment on ledger.events.data).
CREATE FUNCTION ledger.payload_bytes(d jsonb) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN d ? 'payloadBase64' THEN decode(d->>'payloadBase64', 'base64')
            ELSE convert_to(d->>'payload', 'UTF8') END;

CREATE FUNCTION ledger.install_projections(target text)
RETURNS void
LANGUAGE plpgsql AS $install$
BEGIN
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', target);
    EXECUTE format($ddl$
        -- One row per payment (a first purchase or a renewal), with its consume and refund.
        CREATE TABLE %1$I.payments (
            payment_seq             text PRIMARY KEY,
            user_id                 text NOT NULL,
            store_code              text NOT NULL,
            product_id              text NOT NULL,
            product_type            text NOT NULL,
            price                   numeric NOT NULL,
            currency                text NOT NULL,
            transaction_id          text NOT NULL,
            original_transaction_id text,
            lineage_id              text,
            purchase_time           timestamptz NOT NULL,
            expiry_time             timestamptz,
            payload                 bytea,
            sandbox_payment         boolean NOT NULL,
            promotion_payment       boolean NOT NULL,
            product_seq             bigint,
            token_sha256            bytea NOT NULL,
            kind                    text NOT NULL,
            recorded_position       bigint NOT NULL,
            recorded_at             timestamptz NOT NULL,
            consumed_at             timestamptz,
            consumed_position       bigint,
            refunded_at             timestamptz,
            refund_reason           text,
            refunded_position       bigint,
            CONSTRAINT payments_store_transaction_key UNIQUE (store_code, transaction_id),
            -- The library validates every command; these hold for anyone who calls the command
            -- functions directly (a ledger_writer login): a violation refuses the whole command.
            CONSTRAINT payments_valid CHECK (
                store_code IN ('AS', 'GG')
                AND product_type IN ('CONSUMABLE', 'AUTO_RENEWABLE', 'CONSUMABLE_AUTO_RENEWABLE')
                AND price >= 0 AND price <> 'NaN' AND currency ~ '^[A-Z]{3}$'
                AND length(token_sha256) = 32 AND user_id <> '' AND payment_seq <> ''
                AND product_id <> '' AND transaction_id <> ''
                AND (product_type = 'CONSUMABLE' OR expiry_time > purchase_time))
        );
        CREATE INDEX payments_unconsumed_idx ON %1$I.payments (user_id, purchase_time, payment_seq)
            WHERE consumed_at IS NULL AND refunded_at IS NULL AND product_type <> 'AUTO_RENEWABLE';
        CREATE INDEX payments_lineage_idx ON %1$I.payments (store_code, lineage_id)
            WHERE lineage_id IS NOT NULL;
        CREATE INDEX payments_purchase_time_idx ON %1$I.payments (purchase_time);
        CREATE INDEX payments_refunded_at_idx ON %1$I.payments (refunded_at) WHERE refunded_at IS NOT NULL;
        CREATE INDEX payments_consumed_at_idx ON %1$I.payments (consumed_at) WHERE consumed_at IS NOT NULL;

        -- One row per subscription lineage: who owns it and what it sells (from its first payment).
        CREATE TABLE %1$I.lineages (
            store_code              text NOT NULL,
            original_transaction_id text NOT NULL,
            user_id                 text NOT NULL,
            product_id              text NOT NULL,
            product_type            text NOT NULL,
            first_position          bigint NOT NULL,
            PRIMARY KEY (store_code, original_transaction_id)
        );
        CREATE INDEX lineages_user_idx ON %1$I.lineages (user_id, store_code);

        -- Auto-renew turned off (a cancel), at the cancel's own time.
        CREATE TABLE %1$I.auto_renew_changes (
            store_code              text NOT NULL,
            original_transaction_id text NOT NULL,
            changed_at              timestamptz NOT NULL,
            auto_renewing           boolean NOT NULL,
            position                bigint NOT NULL,
            PRIMARY KEY (store_code, original_transaction_id, position)
        );

        -- Each restore a user asked for, with the payments it recorded.
        CREATE TABLE %1$I.restores (
            position     bigint PRIMARY KEY,
            user_id      text NOT NULL,
            store_code   text NOT NULL,
            restored_at  timestamptz NOT NULL,
            recorded     text[] NOT NULL,
            item_count   integer NOT NULL
        );
        CREATE INDEX restores_user_idx ON %1$I.restores (user_id, store_code, restored_at);

        GRANT USAGE ON SCHEMA %1$I TO ledger_writer, ledger_reader;
        GRANT SELECT ON %1$I.payments, %1$I.lineages, %1$I.auto_renew_changes, %1$I.restores TO ledger_reader, ledger_writer;
    $ddl$, target);

    EXECUTE format($fn$
        -- Applies the events with from <= position <= to, set-based, in one call.
        -- Generic plans: every statement is driven by an index range scan of ledger.events, which
        -- suits one event and a rebuild's batch alike, and replanning the six statements on each
        -- append (what custom plans for a range parameter do) would cost more than running them.
        CREATE FUNCTION %1$I.project_range(p_from bigint, p_to bigint)
        RETURNS bigint
        LANGUAGE plpgsql
        SET plan_cache_mode = force_generic_plan
        AS $body$
        DECLARE
            applied bigint := 0;
            types   text[];
        BEGIN
            -- Which kinds of event the range holds: an append's range is one event, and only
            -- the statements for its kind need to run.
            SELECT coalesce(array_agg(DISTINCT e.type), '{}') INTO types
              FROM ledger.events e WHERE e.position BETWEEN p_from AND p_to;

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

REVOKE ALL ON FUNCTION ledger.install_projections(text) FROM PUBLIC;

SELECT ledger.install_projections('ledger');
