-- The stores' own notifications (CONTRACT.md §5): App Store Server Notifications V2 and Google
-- Play real-time developer notifications, and the lines that teach the ledger (`product`,
-- `accountLink`).
--
-- The library verifies a notification (signatures, app, environment) and turns the store's
-- vocabulary into one of the ledger's effects (Sources/PurchaseLedger/Notifications); the
-- functions below decide what the effect does to the ledger, with the same locks and rules as
-- the other commands. Every notification is an event of its own (NotificationReceived, the
-- store's text included); what it changes is recorded as the ordinary events of §2 plus a few
-- new ones, placed at the store's own time (signedDate, eventTimeMillis):
--   AutoRenewEnabled      auto-renew back on (a lineage)
--   BillingStateChanged   grace period, billing retry, account hold, pause, or none (a lineage)
--   RefundReversed        a refund undone: the payment counts again from then
--   ExpiryExtended        a payment's expiry moved (App Store renewal-date extension)
--   PaymentLinked         an SDK line named a payment first learned from a notification
--   ProductDeclared       a `product` line
--   AccountLinked         an `accountLink` line
--   NotificationReleased  a parked notification applied, once its owner became known

-- Projections -----------------------------------------------------------------------------------
-- Added to every projection set by ledger.install_store_projections(schema): the live one below,
-- and a rebuild's shadow copy through ledger.install_projections. project_range gains the new
-- event kinds; the 0007 body runs first, unchanged, under the name project_range_0007.

CREATE FUNCTION ledger.install_store_projections(target text)
RETURNS void
LANGUAGE plpgsql AS $install$
BEGIN
    EXECUTE format($ddl$
        -- A payment first learned from a notification has no purchase token of its own
        -- (token_sha256 null); an SDK line naming it later gives it one (linked_token_sha256).
        ALTER TABLE %1$I.payments
            ALTER COLUMN token_sha256 DROP NOT NULL,
            ADD COLUMN linked_token_sha256  bytea,
            ADD COLUMN reversed_refund_at   timestamptz,
            ADD COLUMN refund_reversed_at   timestamptz,
            ADD COLUMN extended_expiry_time timestamptz,
            ADD COLUMN extended_at          timestamptz;
        -- Google's notifications name a subscription by its purchase token (compared by digest).
        CREATE INDEX payments_google_token_idx ON %1$I.payments (token_sha256) WHERE store_code = 'GG';
        -- A `product` line is refused when payments of the product have another type.
        CREATE INDEX payments_product_idx ON %1$I.payments (store_code, product_id);

        -- Billing states of a lineage, each from its notification's own time.
        CREATE TABLE %1$I.billing_states (
            store_code              text NOT NULL,
            original_transaction_id text NOT NULL,
            changed_at              timestamptz NOT NULL,
            state                   text NOT NULL,  -- inGracePeriod | billingRetry | onHold | paused | none
            grace_expires_at        timestamptz,
            position                bigint NOT NULL,
            PRIMARY KEY (store_code, original_transaction_id, position)
        );

        -- Every notification received, by the store's id; parked ones with the keys that can
        -- release them.
        CREATE TABLE %1$I.notifications (
            store_code        text NOT NULL,
            notification_id   text NOT NULL,
            notification_type text NOT NULL,
            effect            text NOT NULL,
            effective_at      timestamptz NOT NULL,
            position          bigint NOT NULL UNIQUE,
            outcome           text NOT NULL,        -- applied | ignored | parked
            parked            boolean NOT NULL,
            released_position bigint,
            lineage_key       text,
            transaction_key   text,
            account_key       text,
            token_key         bytea,
            PRIMARY KEY (store_code, notification_id)
        );
        CREATE INDEX notifications_parked_idx ON %1$I.notifications (store_code, effective_at, position) WHERE parked;

        -- The type a `product` line declared for a store product.
        CREATE TABLE %1$I.products (
            store_code   text NOT NULL,
            product_id   text NOT NULL,
            product_type text NOT NULL,
            position     bigint NOT NULL,
            PRIMARY KEY (store_code, product_id)
        );

        -- Whose notifications carry an `appAccountToken`.
        CREATE TABLE %1$I.account_links (
            store_code        text NOT NULL,
            app_account_token text NOT NULL,
            user_id           text NOT NULL,
            position          bigint NOT NULL,
            PRIMARY KEY (store_code, app_account_token)
        );

        -- Other paymentSeqs that name a payment first learned from a notification.
        CREATE TABLE %1$I.payment_aliases (
            alias_seq   text PRIMARY KEY,
            payment_seq text NOT NULL,
            position    bigint NOT NULL
        );

        GRANT SELECT ON %1$I.billing_states, %1$I.notifications, %1$I.products, %1$I.account_links,
                        %1$I.payment_aliases TO ledger_reader, ledger_writer;
        ALTER FUNCTION %1$I.project_range(bigint, bigint) RENAME TO project_range_0007;
    $ddl$, target);

    EXECUTE format($fn$
        -- Applies the events with from <= position <= to: 0007's statements, then those of the
        -- kinds added for the stores' notifications (only the ones the range holds).
        CREATE FUNCTION %1$I.project_range(p_from bigint, p_to bigint)
        RETURNS bigint
        LANGUAGE plpgsql
        SET plan_cache_mode = force_generic_plan
        SET jit = off
        AS $body$
        DECLARE
            applied bigint;
            types   text[];
        BEGIN
            applied := %1$I.project_range_0007(p_from, p_to);
            IF p_from = p_to THEN
                SELECT ARRAY[e.type] INTO types FROM ledger.events e WHERE e.position = p_from;
            ELSE
                SELECT coalesce(array_agg(DISTINCT e.type), '{}') INTO types
                  FROM ledger.events e WHERE e.position BETWEEN p_from AND p_to;
            END IF;
            IF NOT types && ARRAY['NotificationReceived', 'NotificationReleased', 'AutoRenewEnabled',
                                  'BillingStateChanged', 'RefundReversed', 'ExpiryExtended', 'PaymentLinked',
                                  'ProductDeclared', 'AccountLinked'] THEN
                RETURN applied;
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
             WHERE e.position BETWEEN p_from AND p_to AND e.type = 'NotificationReceived';
            END IF;

            IF 'NotificationReleased' = ANY(types) THEN
            UPDATE %1$I.notifications n SET parked = false, released_position = e.position
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to AND e.type = 'NotificationReleased'
               AND n.store_code = e.data->>'storeCode' AND n.notification_id = e.data->>'notificationId';
            END IF;

            IF 'AutoRenewEnabled' = ANY(types) THEN
            INSERT INTO %1$I.auto_renew_changes (store_code, original_transaction_id, changed_at,
                                                 auto_renewing, position)
            SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, true, e.position
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to AND e.type = 'AutoRenewEnabled';
            END IF;

            IF 'BillingStateChanged' = ANY(types) THEN
            INSERT INTO %1$I.billing_states (store_code, original_transaction_id, changed_at, state,
                                             grace_expires_at, position)
            SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at, e.data->>'state',
                   (e.data->>'gracePeriodExpiresAt')::timestamptz, e.position
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to AND e.type = 'BillingStateChanged';
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
                     WHERE e.position BETWEEN p_from AND p_to AND e.type = 'RefundReversed') t
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
                     WHERE e.position BETWEEN p_from AND p_to AND e.type = 'ExpiryExtended'
                     ORDER BY e.data->>'paymentSeq', e.occurred_at DESC, e.position DESC) x
             WHERE p.payment_seq = x.seq AND (p.extended_at IS NULL OR p.extended_at <= x.occurred_at);
            END IF;

            IF 'PaymentLinked' = ANY(types) THEN
            INSERT INTO %1$I.payment_aliases (alias_seq, payment_seq, position)
            SELECT e.data->>'alias', e.data->>'paymentSeq', e.position
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to AND e.type = 'PaymentLinked' AND e.data->>'alias' IS NOT NULL;
            UPDATE %1$I.payments p SET linked_token_sha256 = decode(e.data->>'purchaseTokenSha256', 'hex')
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to AND e.type = 'PaymentLinked'
               AND p.payment_seq = e.data->>'paymentSeq' AND p.linked_token_sha256 IS NULL;
            END IF;

            IF 'ProductDeclared' = ANY(types) THEN
            INSERT INTO %1$I.products (store_code, product_id, product_type, position)
            SELECT DISTINCT ON (e.data->>'storeCode', e.data->>'productId')
                   e.data->>'storeCode', e.data->>'productId', e.data->>'productType', e.position
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to AND e.type = 'ProductDeclared'
             ORDER BY e.data->>'storeCode', e.data->>'productId', e.position DESC
            ON CONFLICT (store_code, product_id) DO UPDATE
               SET product_type = excluded.product_type, position = excluded.position;
            END IF;

            IF 'AccountLinked' = ANY(types) THEN
            INSERT INTO %1$I.account_links (store_code, app_account_token, user_id, position)
            SELECT e.data->>'storeCode', e.data->>'appAccountToken', e.data->>'userId', e.position
              FROM ledger.events e
             WHERE e.position BETWEEN p_from AND p_to AND e.type = 'AccountLinked'
            ON CONFLICT DO NOTHING;
            END IF;

            RETURN applied;
        END
        $body$;
        REVOKE ALL ON FUNCTION %1$I.project_range(bigint, bigint), %1$I.project_range_0007(bigint, bigint) FROM PUBLIC;
    $fn$, target);
END
$install$;

ALTER FUNCTION ledger.install_projections(text) RENAME TO install_projections_0007;

CREATE FUNCTION ledger.install_projections(target text)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger.install_projections_0007(target);
    PERFORM ledger.install_store_projections(target);
END
$$;

SELECT ledger.install_store_projections('ledger');
REVOKE ALL ON FUNCTION ledger.install_projections(text), ledger.install_store_projections(text) FROM PUBLIC;

-- Reads -----------------------------------------------------------------------------------------

-- Whether a payment was refunded at p_at (a reversed refund counted between the two).
CREATE FUNCTION ledger.refunded_at_instant(refunded_at timestamptz, reversed_refund_at timestamptz,
                                           refund_reversed_at timestamptz, p_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(refunded_at <= p_at, false)
    OR coalesce(reversed_refund_at <= p_at AND refund_reversed_at > p_at, false);

-- A payment's expiry at p_at: an extension counts from its own time.
CREATE FUNCTION ledger.expiry_at_instant(expiry_time timestamptz, extended_expiry_time timestamptz,
                                         extended_at timestamptz, p_at timestamptz)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN extended_at <= p_at THEN extended_expiry_time ELSE expiry_time END;

-- Every subscription lineage with at least one payment made by p_at, as CONTRACT.md §3.2
-- evaluates it at p_at, billing states included. Filter it by user_id and store_code: the
-- filters reach the lineages index.
DROP FUNCTION ledger.subscriptions_at(timestamptz);
CREATE FUNCTION ledger.subscriptions_at(p_at timestamptz)
RETURNS TABLE (user_id text, store_code text, product_id text, product_type text,
               original_transaction_id text, latest_payment_seq text, purchase_time timestamptz,
               expiry_time timestamptz, auto_renewing boolean, status text, entitled boolean,
               grace_period_expiry_time timestamptz)
LANGUAGE sql STABLE AS $$
SELECT s.user_id, s.store_code, s.product_id, s.product_type, s.original_transaction_id,
       s.latest_payment_seq, s.purchase_time, s.expiry_time, s.auto_renewing, s.status,
       s.status IN ('active', 'inGracePeriod'),
       CASE WHEN s.status = 'inGracePeriod' THEN s.grace_expires_at END
  FROM (
    SELECT l.user_id, l.store_code, l.product_id, l.product_type, l.original_transaction_id,
           coalesce(live.payment_seq, latest.payment_seq) AS latest_payment_seq,
           agg.first_purchase AS purchase_time,
           live.expiry_time,
           (ar.auto_renewing IS NULL OR ar.auto_renewing OR ar.changed_at < agg.last_purchase) AS auto_renewing,
           CASE WHEN live.expiry_time > p_at THEN 'active'
                -- A billing state holds from its time until a renewal paid after it.
                WHEN bs.state IS NOT NULL AND bs.state <> 'none'
                     AND NOT coalesce(agg.last_renewal > bs.changed_at, false) THEN
                     CASE WHEN bs.state <> 'inGracePeriod' THEN bs.state
                          WHEN bs.grace_expires_at IS NULL OR bs.grace_expires_at > p_at THEN 'inGracePeriod'
                          ELSE 'billingRetry' END
                WHEN agg.revoked THEN 'revoked'
                ELSE 'expired' END AS status,
           bs.grace_expires_at
      FROM ledger.lineages l
      CROSS JOIN LATERAL (
            SELECT min(p.purchase_time) AS first_purchase,
                   max(p.purchase_time) AS last_purchase,
                   max(p.purchase_time) FILTER (WHERE p.transaction_id <> p.lineage_id) AS last_renewal,
                   coalesce(bool_or(ledger.refunded_at_instant(p.refunded_at, p.reversed_refund_at, p.refund_reversed_at, p_at)
                                    AND ledger.expiry_at_instant(p.expiry_time, p.extended_expiry_time, p.extended_at, p_at) > p_at),
                            false) AS revoked
              FROM ledger.payments p
             WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
               AND p.purchase_time <= p_at) agg
      LEFT JOIN LATERAL (
            SELECT p.payment_seq, ledger.expiry_at_instant(p.expiry_time, p.extended_expiry_time, p.extended_at, p_at) AS expiry_time
              FROM ledger.payments p
             WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
               AND p.purchase_time <= p_at
               AND NOT ledger.refunded_at_instant(p.refunded_at, p.reversed_refund_at, p.refund_reversed_at, p_at)
             ORDER BY 2 DESC, p.purchase_time DESC, p.payment_seq DESC
             LIMIT 1) live ON true
      LEFT JOIN LATERAL (
            SELECT p.payment_seq
              FROM ledger.payments p
             WHERE p.store_code = l.store_code AND p.lineage_id = l.original_transaction_id
               AND p.purchase_time <= p_at
             ORDER BY p.purchase_time DESC, p.payment_seq DESC
             LIMIT 1) latest ON true
      LEFT JOIN LATERAL (
            SELECT c.auto_renewing, c.changed_at
              FROM ledger.auto_renew_changes c
             WHERE c.store_code = l.store_code AND c.original_transaction_id = l.original_transaction_id
               AND c.changed_at <= p_at
             ORDER BY c.changed_at DESC, c.position DESC
             LIMIT 1) ar ON true
      LEFT JOIN LATERAL (
            SELECT b.state, b.changed_at, b.grace_expires_at
              FROM ledger.billing_states b
             WHERE b.store_code = l.store_code AND b.original_transaction_id = l.original_transaction_id
               AND b.changed_at <= p_at
             ORDER BY b.changed_at DESC, b.position DESC
             LIMIT 1) bs ON true
     WHERE agg.first_purchase IS NOT NULL) s
$$;

GRANT EXECUTE ON FUNCTION ledger.subscriptions_at(timestamptz) TO ledger_reader, ledger_writer;

-- The payment a paymentSeq names: itself, or the payment it is another name of.
CREATE FUNCTION ledger.payment_named(p_seq text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN coalesce((SELECT a.payment_seq FROM ledger.payment_aliases a WHERE a.alias_seq = p_seq), p_seq);
END
$$;

-- Commands --------------------------------------------------------------------------------------

-- Records a purchase or a renewal (p_kind 'purchase' | 'renewal'); d is the event's data.
-- p_from_store: the payment comes from a verified store notification (it has no purchase token,
-- and is a duplicate of any payment already recorded for its store transaction). An SDK line for
-- a payment first learned from a notification, with the same user, product and price, is a
-- duplicate that makes its paymentSeq and token name that payment too (PaymentLinked).
-- A new payment releases the parked notifications that were waiting for it.
CREATE FUNCTION ledger.record_payment_core(p_kind text, d jsonb, p_from_store boolean)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    v_seq     text := d->>'paymentSeq';
    v_store   text := d->>'storeCode';
    v_txid    text := d->>'transactionId';
    v_type    text := d->>'productType';
    v_token   bytea;
    v_lineage text := CASE WHEN d->>'productType' <> 'CONSUMABLE'
                           THEN coalesce(d->>'originalTransactionId', d->>'transactionId') END;
    p         record;
    l         record;
    v_field   text;
    v_pos     bigint;
BEGIN
    -- A payment from a store notification has no token: the rules are checked with a stand-in.
    v_field := ledger.payment_invalid_field(CASE WHEN p_from_store AND d->>'purchaseTokenSha256' IS NULL
        THEN d || jsonb_build_object('purchaseTokenSha256', repeat('0', 64)) ELSE d END);
    IF v_field IS NOT NULL THEN
        RETURN ledger.rejected('INVALID_INPUT',
            format('payment %s: %s is missing or invalid', coalesce(v_seq, '(no paymentSeq)'), v_field), v_seq);
    END IF;
    v_token := decode(d->>'purchaseTokenSha256', 'hex');
    -- Lock order, for every command: payment, store transaction, lineage, Google token.
    PERFORM pg_advisory_xact_lock(hashtextextended('payment:' || v_seq, 0)),
            pg_advisory_xact_lock(hashtextextended('transaction:' || v_store || ':' || v_txid, 0)),
            pg_advisory_xact_lock(hashtextextended('lineage:' || v_store || ':' || coalesce(v_lineage, v_txid), 0));
    IF v_store = 'GG' AND v_token IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('token:' || encode(v_token, 'hex'), 0));
    END IF;

    -- The payment by its name, else another payment holding the same store transaction.
    SELECT payment_seq, user_id, product_id, price, token_sha256, linked_token_sha256 INTO p
      FROM ledger.payments WHERE payment_seq = v_seq;
    IF NOT FOUND THEN
        SELECT payment_seq, user_id, product_id, price, token_sha256, linked_token_sha256 INTO p FROM ledger.payments
         WHERE store_code = v_store AND transaction_id = v_txid;
    END IF;
    IF FOUND AND p_from_store THEN
        RETURN ROW('duplicate', NULL, NULL, p.payment_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF FOUND AND p.token_sha256 IS NULL THEN
        -- First learned from a store notification.
        IF p.user_id IS DISTINCT FROM d->>'userId' THEN
            RETURN ledger.rejected('USER_INVALID', format('payment %s belongs to another user', v_seq), v_seq);
        ELSIF p.product_id IS DISTINCT FROM d->>'productId' THEN
            RETURN ledger.rejected('PRODUCT_INVALID',
                format('payment %s was recorded for product %s, not %s', v_seq, p.product_id, d->>'productId'), v_seq);
        ELSIF p.price IS DISTINCT FROM (d->>'price')::numeric THEN
            RETURN ledger.rejected('PAYMENT_CONFLICT',
                format('transaction %s of store %s was recorded from the store with price %s', v_txid, v_store, p.price), v_seq);
        ELSIF p.linked_token_sha256 IS NOT NULL AND NOT ledger.digest_equal(p.linked_token_sha256, v_token) THEN
            RETURN ledger.rejected('PAYMENT_CONFLICT',
                format('transaction %s of store %s was recorded with another purchaseToken', v_txid, v_store), v_seq);
        END IF;
        IF p.linked_token_sha256 IS NULL
           OR (v_seq <> p.payment_seq AND NOT EXISTS (SELECT FROM ledger.payment_aliases WHERE alias_seq = v_seq)) THEN
            v_pos := ledger.append('payment:' || p.payment_seq, 'PaymentLinked',
                jsonb_build_object('paymentSeq', p.payment_seq, 'userId', p.user_id,
                                   'alias', CASE WHEN v_seq <> p.payment_seq THEN v_seq END,
                                   'purchaseTokenSha256', d->>'purchaseTokenSha256'), now());
            PERFORM ledger.project_range(v_pos, v_pos);
        END IF;
        RETURN ROW('duplicate', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF FOUND AND p.payment_seq <> v_seq THEN
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
    IF EXISTS (SELECT FROM ledger.notifications WHERE parked AND store_code = v_store) THEN
        PERFORM ledger.release_parked(v_store, v_lineage, v_txid, NULL, CASE WHEN v_store = 'GG' THEN v_token END);
    END IF;
    RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
END
$$;

CREATE OR REPLACE FUNCTION ledger.record_payment_in_tx(p_kind text, d jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
BEGIN
    RETURN ledger.record_payment_core(p_kind, d, false);
END
$$;

-- Consumes a payment: hands its goods out exactly once. The payment's row lock makes concurrent
-- consumes of one payment wait for each other; the first one wins. A payment first learned from
-- a store notification has no token: its consume shows none (p_token_sha256 null).
CREATE OR REPLACE FUNCTION ledger.consume(p_payment_seq text, p_user_id text, p_token_sha256 bytea, p_time timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_seq   text := p_payment_seq;
    v_token bytea;
    p       record;
    v_pos   bigint;
BEGIN
    SELECT user_id, coalesce(token_sha256, linked_token_sha256) AS token, product_type, consumed_at, refunded_at INTO p
      FROM ledger.payments WHERE payment_seq = v_seq FOR UPDATE;
    IF NOT FOUND THEN
        v_seq := ledger.payment_named(p_payment_seq);
        SELECT user_id, coalesce(token_sha256, linked_token_sha256) AS token, product_type, consumed_at, refunded_at INTO p
          FROM ledger.payments WHERE payment_seq = v_seq FOR UPDATE;
    END IF;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND', format('no payment %s', p_payment_seq), p_payment_seq);
    ELSIF p.user_id IS DISTINCT FROM p_user_id THEN
        RETURN ledger.rejected('USER_INVALID', format('payment %s belongs to another user', p_payment_seq), p_payment_seq);
    ELSIF NOT (ledger.digest_equal(p.token, p_token_sha256) OR (p.token IS NULL AND p_token_sha256 IS NULL)) THEN
        RETURN ledger.rejected('TOKEN_INVALID',
            CASE WHEN p.token IS NULL
                 THEN format('payment %s was learned from the store and has no purchase token: consume it without one', p_payment_seq)
                 ELSE format('the purchase token does not match payment %s', p_payment_seq) END, p_payment_seq);
    ELSIF p.product_type = 'AUTO_RENEWABLE' THEN
        RETURN ledger.rejected('NOT_CONSUMABLE',
            format('payment %s is an AUTO_RENEWABLE subscription, which is not consumed', p_payment_seq), p_payment_seq);
    ELSIF p.consumed_at IS NOT NULL THEN
        RETURN ROW('alreadyConsumed', NULL, NULL, p_payment_seq, p.consumed_at, NULL, NULL)::ledger.command_result;
    ELSIF p.refunded_at IS NOT NULL THEN
        RETURN ledger.rejected('REFUNDED',
            format('payment %s was refunded at %s and was never consumed', p_payment_seq,
                   to_char(p.refunded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), p_payment_seq);
    END IF;
    v_pos := ledger.append('payment:' || v_seq, 'PaymentConsumed',
                           jsonb_build_object('paymentSeq', v_seq, 'userId', p_user_id), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('consumed', NULL, NULL, p_payment_seq, p_time, NULL, NULL)::ledger.command_result;
END
$$;

-- Records a refund (App Store refund or revocation, Google Play voided purchase); a refund
-- that was reversed can be refunded again.
CREATE OR REPLACE FUNCTION ledger.refund(p_payment_seq text, p_time timestamptz, p_reason text)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_seq text := p_payment_seq;
    p     record;
    v_pos bigint;
BEGIN
    SELECT user_id, refunded_at INTO p FROM ledger.payments WHERE payment_seq = v_seq FOR UPDATE;
    IF NOT FOUND THEN
        v_seq := ledger.payment_named(p_payment_seq);
        SELECT user_id, refunded_at INTO p FROM ledger.payments WHERE payment_seq = v_seq FOR UPDATE;
    END IF;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND', format('no payment %s', p_payment_seq), p_payment_seq);
    ELSIF p.refunded_at IS NOT NULL THEN
        RETURN ROW('duplicate', NULL, NULL, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    v_pos := ledger.append('payment:' || v_seq, 'PaymentRefunded',
                           jsonb_strip_nulls(jsonb_build_object('paymentSeq', v_seq, 'userId', p.user_id,
                                                                'reason', p_reason)), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('recorded', NULL, NULL, p_payment_seq, NULL, NULL, NULL)::ledger.command_result;
END
$$;

-- Records that the user turned auto-renew off; a duplicate when it is already off at that time.
CREATE OR REPLACE FUNCTION ledger.cancel(p_store_code text, p_original_transaction_id text, p_time timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    l           record;
    v_last_paid timestamptz;
    c           record;
    v_pos       bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('lineage:' || p_store_code || ':' || p_original_transaction_id, 0));
    SELECT user_id INTO l FROM ledger.lineages
     WHERE store_code = p_store_code AND original_transaction_id = p_original_transaction_id;
    IF NOT FOUND THEN
        RETURN ledger.rejected('NOT_FOUND',
            format('no subscription %s on store %s', p_original_transaction_id, p_store_code));
    END IF;
    SELECT max(purchase_time) INTO v_last_paid FROM ledger.payments
     WHERE store_code = p_store_code AND lineage_id = p_original_transaction_id AND purchase_time <= p_time;
    SELECT changed_at, auto_renewing INTO c FROM ledger.auto_renew_changes
     WHERE store_code = p_store_code AND original_transaction_id = p_original_transaction_id
       AND changed_at <= p_time
     ORDER BY changed_at DESC, position DESC LIMIT 1;
    IF FOUND AND NOT c.auto_renewing AND (v_last_paid IS NULL OR c.changed_at >= v_last_paid) THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    v_pos := ledger.append('lineage:' || p_store_code || ':' || p_original_transaction_id, 'AutoRenewCancelled',
                           jsonb_build_object('storeCode', p_store_code,
                                              'originalTransactionId', p_original_transaction_id,
                                              'userId', l.user_id), p_time);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;

-- `product` line: the type of a store product.
CREATE FUNCTION ledger.declare_product(p_store_code text, p_product_id text, p_product_type text)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_known text;
    v_pos   bigint;
BEGIN
    IF coalesce(p_store_code, '') NOT IN ('AS', 'GG') THEN
        RETURN ledger.rejected('UNKNOWN_STORE', format('unknown store %s', p_store_code));
    ELSIF coalesce(p_product_type, '') NOT IN ('CONSUMABLE', 'AUTO_RENEWABLE', 'CONSUMABLE_AUTO_RENEWABLE') THEN
        RETURN ledger.rejected('UNKNOWN_PRODUCT_TYPE', format('unknown product type %s', p_product_type));
    ELSIF coalesce(p_product_id, '') = '' THEN
        RETURN ledger.rejected('INVALID_INPUT', 'productId: missing');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('product:' || p_store_code || ':' || p_product_id, 0));
    SELECT product_type INTO v_known FROM ledger.products WHERE store_code = p_store_code AND product_id = p_product_id;
    IF v_known = p_product_type THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    SELECT product_type INTO v_known FROM ledger.payments
     WHERE store_code = p_store_code AND product_id = p_product_id AND product_type <> p_product_type LIMIT 1;
    IF FOUND THEN
        RETURN ledger.rejected('PRODUCT_INVALID',
            format('product %s of store %s already has payments as %s', p_product_id, p_store_code, v_known));
    END IF;
    v_pos := ledger.append('product:' || p_store_code || ':' || p_product_id, 'ProductDeclared',
                           jsonb_build_object('storeCode', p_store_code, 'productId', p_product_id,
                                              'productType', p_product_type), now());
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;

-- `accountLink` line: notifications carrying this appAccountToken belong to p_user_id. Releases
-- the notifications parked for it.
CREATE FUNCTION ledger.link_account(p_user_id text, p_store_code text, p_token text)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_user text;
    v_pos  bigint;
BEGIN
    IF coalesce(p_store_code, '') NOT IN ('AS', 'GG') THEN
        RETURN ledger.rejected('UNKNOWN_STORE', format('unknown store %s', p_store_code));
    ELSIF coalesce(p_user_id, '') = '' OR coalesce(p_token, '') = '' THEN
        RETURN ledger.rejected('INVALID_INPUT', 'userId and appAccountToken are required');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('account:' || p_store_code || ':' || p_token, 0));
    SELECT user_id INTO v_user FROM ledger.account_links WHERE store_code = p_store_code AND app_account_token = p_token;
    IF v_user = p_user_id THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    ELSIF FOUND THEN
        RETURN ledger.rejected('USER_INVALID', format('appAccountToken %s is linked to another user', p_token));
    END IF;
    v_pos := ledger.append('account:' || p_store_code || ':' || p_token, 'AccountLinked',
                           jsonb_build_object('storeCode', p_store_code, 'appAccountToken', p_token,
                                              'userId', p_user_id), now());
    PERFORM ledger.project_range(v_pos, v_pos);
    PERFORM ledger.release_parked(p_store_code, NULL, NULL, p_token, NULL);
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;

-- Notifications ---------------------------------------------------------------------------------
-- n: a verified notification as the library hands it over (Notifications/StoreNotification.swift):
--   storeCode, notificationId, notificationType, effect, effectiveAt, and as the effect needs
--   them: transactionId, originalTransactionId, appAccountToken, storeProductType
--   ('consumable' | 'subscription'), payment (the §2.1 event data, without userId for App Store),
--   refundAt, reason, expiryTime, gracePeriodExpiresAt, purchaseTokenSha256, orderId; and the
--   store's own text (signedPayload, or Google's message).
-- effect: payment | autoRenewOff | autoRenewOn | inGracePeriod | billingRetry | onHold | paused |
--   billingEnded | refund | refundReversed | revoke | revokeLatest | extend | ignored.

-- The user a notification belongs to, or null when the ledger does not know yet.
CREATE FUNCTION ledger.notification_owner(n jsonb) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_user text;
BEGIN
    IF n->>'storeCode' = 'GG' THEN
        IF n->'payment'->>'userId' IS NOT NULL THEN
            RETURN n->'payment'->>'userId';
        END IF;
        SELECT user_id INTO v_user FROM ledger.payments
         WHERE store_code = 'GG' AND transaction_id = n->>'orderId';
        IF v_user IS NULL THEN
            SELECT user_id INTO v_user FROM ledger.payments
             WHERE store_code = 'GG' AND token_sha256 = decode(n->>'purchaseTokenSha256', 'hex')
             ORDER BY purchase_time DESC LIMIT 1;
        END IF;
        RETURN v_user;
    END IF;
    SELECT user_id INTO v_user FROM ledger.lineages
     WHERE store_code = 'AS' AND original_transaction_id = n->>'originalTransactionId';
    IF v_user IS NULL THEN
        SELECT user_id INTO v_user FROM ledger.payments WHERE store_code = 'AS' AND transaction_id = n->>'transactionId';
    END IF;
    IF v_user IS NULL THEN
        SELECT user_id INTO v_user FROM ledger.account_links
         WHERE store_code = 'AS' AND app_account_token = n->>'appAccountToken';
    END IF;
    RETURN v_user;
END
$$;

-- Applies a notification whose owner is known. Writes nothing when it refuses.
CREATE FUNCTION ledger.apply_notification(n jsonb, p_owner text)
RETURNS ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    v_store    text := n->>'storeCode';
    v_effect   text := n->>'effect';
    v_at       timestamptz := (n->>'effectiveAt')::timestamptz;
    v_lineage  text := n->>'originalTransactionId';
    v_seq      text;
    v_recorded boolean := false;
    v_type     text;
    d          jsonb;
    r          ledger.command_result;
    v_pos      bigint;
    v_state    text;
BEGIN
    -- The payment the notification is about; an App Store transaction not yet in the ledger is
    -- recorded first (the store signed it: it is a payment).
    IF v_store = 'AS' THEN
        SELECT payment_seq INTO v_seq FROM ledger.payments WHERE store_code = 'AS' AND transaction_id = n->>'transactionId';
        IF v_seq IS NULL AND n ? 'payment' THEN
            v_type := CASE WHEN n->>'storeProductType' = 'consumable' THEN 'CONSUMABLE' ELSE coalesce(
                (SELECT product_type FROM ledger.lineages WHERE store_code = 'AS' AND original_transaction_id = v_lineage),
                (SELECT product_type FROM ledger.products WHERE store_code = 'AS' AND product_id = n->'payment'->>'productId'),
                'AUTO_RENEWABLE') END;
            d := n->'payment' || jsonb_build_object('userId', p_owner, 'productType', v_type,
                                                    'paymentSeq', n->>'transactionId', 'source', 'notification');
            r := ledger.record_payment_core(
                CASE WHEN v_type <> 'CONSUMABLE' AND n->>'transactionId' <> coalesce(v_lineage, n->>'transactionId')
                     THEN 'renewal' ELSE 'purchase' END, d, true);
            IF r.status = 'rejected' THEN
                RETURN r;
            END IF;
            v_seq := r.payment_seq;
            v_recorded := r.status = 'recorded';
        END IF;
    ELSIF v_effect = 'payment' THEN
        RETURN ledger.record_payment_core(CASE WHEN n->'payment'->>'transactionId'
                                                    = coalesce(n->'payment'->>'originalTransactionId', n->'payment'->>'transactionId')
                                               THEN 'purchase' ELSE 'renewal' END, n->'payment', false);
    ELSE
        -- Google: the order, else the latest payment holding the notification's token.
        SELECT payment_seq, lineage_id INTO v_seq, v_lineage FROM ledger.payments
         WHERE store_code = 'GG' AND transaction_id = n->>'orderId';
        IF v_seq IS NULL THEN
            SELECT payment_seq, lineage_id INTO v_seq, v_lineage FROM ledger.payments
             WHERE store_code = 'GG' AND token_sha256 = decode(n->>'purchaseTokenSha256', 'hex')
             ORDER BY purchase_time DESC, payment_seq DESC LIMIT 1;
        END IF;
    END IF;

    IF v_effect = 'payment' THEN
        RETURN ROW(CASE WHEN v_recorded THEN 'recorded' ELSE 'duplicate' END, NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF v_effect IN ('refund', 'revoke', 'revokeLatest') THEN
        IF v_seq IS NULL THEN
            RETURN ledger.rejected('NOT_FOUND', format('no payment for transaction %s', coalesce(n->>'transactionId', n->>'orderId')));
        END IF;
        r := ledger.refund(v_seq, coalesce((n->>'refundAt')::timestamptz, v_at),
                           coalesce(n->>'reason', CASE v_effect WHEN 'refund' THEN 'refund' ELSE 'revoked' END));
        RETURN r;
    ELSIF v_effect = 'refundReversed' THEN
        IF v_seq IS NULL OR NOT EXISTS (SELECT FROM ledger.payments WHERE payment_seq = v_seq AND refunded_at IS NOT NULL) THEN
            RETURN ROW('duplicate', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
        END IF;
        v_pos := ledger.append('payment:' || v_seq, 'RefundReversed',
                               jsonb_build_object('paymentSeq', v_seq, 'userId', p_owner), v_at);
        PERFORM ledger.project_range(v_pos, v_pos);
        RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    ELSIF v_effect = 'extend' THEN
        IF v_seq IS NULL OR n->>'expiryTime' IS NULL THEN
            RETURN ledger.rejected('NOT_FOUND', format('no payment for transaction %s', n->>'transactionId'));
        END IF;
        v_pos := ledger.append('payment:' || v_seq, 'ExpiryExtended',
                               jsonb_build_object('paymentSeq', v_seq, 'userId', p_owner,
                                                  'expiryTime', n->>'expiryTime'), v_at);
        PERFORM ledger.project_range(v_pos, v_pos);
        RETURN ROW('recorded', NULL, NULL, v_seq, NULL, NULL, NULL)::ledger.command_result;
    END IF;

    -- The rest changes the lineage.
    IF v_lineage IS NULL OR NOT EXISTS (SELECT FROM ledger.lineages WHERE store_code = v_store AND original_transaction_id = v_lineage) THEN
        RETURN ledger.rejected('NOT_FOUND', format('no subscription %s on store %s', coalesce(v_lineage, '(none)'), v_store));
    END IF;
    IF v_effect IN ('autoRenewOff', 'autoRenewOn') THEN
        v_pos := ledger.append('lineage:' || v_store || ':' || v_lineage,
                               CASE v_effect WHEN 'autoRenewOff' THEN 'AutoRenewCancelled' ELSE 'AutoRenewEnabled' END,
                               jsonb_build_object('storeCode', v_store, 'originalTransactionId', v_lineage,
                                                  'userId', p_owner, 'notificationId', n->>'notificationId'), v_at);
    ELSE
        v_state := CASE v_effect WHEN 'billingEnded' THEN 'none' ELSE v_effect END;
        IF v_state NOT IN ('inGracePeriod', 'billingRetry', 'onHold', 'paused', 'none') THEN
            RETURN ledger.rejected('INVALID_INPUT', format('effect: unknown effect %s', v_effect));
        END IF;
        v_pos := ledger.append('lineage:' || v_store || ':' || v_lineage, 'BillingStateChanged',
                               jsonb_strip_nulls(jsonb_build_object('storeCode', v_store, 'originalTransactionId', v_lineage,
                                   'userId', p_owner, 'state', v_state,
                                   'gracePeriodExpiresAt', n->>'gracePeriodExpiresAt',
                                   'notificationId', n->>'notificationId')), v_at);
    END IF;
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN ROW('recorded', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
END
$$;

-- Applies, in the store's order, the parked notifications that one of the keys names and whose
-- owner is known now. Each is marked released before it applies, so that a payment it records
-- (which releases in turn) never applies it twice.
CREATE FUNCTION ledger.release_parked(p_store text, p_lineage text, p_transaction text, p_account text, p_token bytea)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    w       record;
    v_owner text;
    v_pos   bigint;
    v_count integer := 0;
BEGIN
    FOR w IN
        SELECT n.position, n.notification_id, e.data
          FROM ledger.notifications n JOIN ledger.events e ON e.position = n.position
         WHERE n.parked AND n.store_code = p_store
           AND (n.lineage_key = p_lineage OR n.transaction_key = p_transaction
                OR n.account_key = p_account OR n.token_key = p_token)
         ORDER BY n.effective_at, n.position
    LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM ledger.notifications WHERE position = w.position AND parked);
        v_owner := ledger.notification_owner(w.data);
        CONTINUE WHEN v_owner IS NULL;
        v_pos := ledger.append('notification:' || p_store || ':' || w.notification_id, 'NotificationReleased',
                               jsonb_build_object('storeCode', p_store, 'notificationId', w.notification_id,
                                                  'userId', v_owner), now());
        PERFORM ledger.project_range(v_pos, v_pos);
        PERFORM ledger.apply_notification(w.data, v_owner);
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END
$$;

-- A verified store notification (CONTRACT.md §5): a duplicate by its id; else applied when its
-- owner is known, parked when not, ignored when it has no effect; always kept as an event.
CREATE FUNCTION ledger.notify(n jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_store   text := n->>'storeCode';
    v_id      text := n->>'notificationId';
    v_owner   text;
    v_outcome text;
    r         ledger.command_result;
    v_pos     bigint;
BEGIN
    IF coalesce(v_store, '') NOT IN ('AS', 'GG') OR coalesce(v_id, '') = '' OR n->>'effect' IS NULL
       OR n->>'effectiveAt' IS NULL THEN
        RETURN ledger.rejected('INVALID_INPUT', 'notification: storeCode, notificationId, effect and effectiveAt are required');
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('notification:' || v_store || ':' || v_id, 0));
    IF EXISTS (SELECT FROM ledger.notifications WHERE store_code = v_store AND notification_id = v_id) THEN
        RETURN ROW('duplicate', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    END IF;
    IF n->>'effect' = 'ignored' THEN
        v_outcome := 'ignored';
        r := ROW('ignored', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
    ELSE
        -- Parking and releasing hold the locks of what they wait for, in the order the other
        -- commands take them: account link; payment, store transaction, lineage; Google token.
        IF v_store = 'AS' THEN
            IF n->>'appAccountToken' IS NOT NULL THEN
                PERFORM pg_advisory_xact_lock(hashtextextended('account:AS:' || (n->>'appAccountToken'), 0));
            END IF;
            PERFORM pg_advisory_xact_lock(hashtextextended('payment:' || (n->>'transactionId'), 0)),
                    pg_advisory_xact_lock(hashtextextended('transaction:AS:' || (n->>'transactionId'), 0)),
                    pg_advisory_xact_lock(hashtextextended('lineage:AS:'
                        || coalesce(n->>'originalTransactionId', n->>'transactionId'), 0));
        ELSIF n->>'effect' <> 'payment' AND n->>'purchaseTokenSha256' IS NOT NULL THEN
            PERFORM pg_advisory_xact_lock(hashtextextended('token:' || (n->>'purchaseTokenSha256'), 0));
        END IF;
        v_owner := ledger.notification_owner(n);
        IF v_owner IS NULL THEN
            v_outcome := 'parked';
            r := ROW('parked', NULL, NULL, NULL, NULL, NULL, NULL)::ledger.command_result;
        ELSE
            r := ledger.apply_notification(n, v_owner);
            IF r.status = 'rejected' THEN
                RETURN r;
            END IF;
            v_outcome := 'applied';
        END IF;
    END IF;
    v_pos := ledger.append('notification:' || v_store || ':' || v_id, 'NotificationReceived',
                           n || jsonb_build_object('outcome', v_outcome), (n->>'effectiveAt')::timestamptz, 0);
    PERFORM ledger.project_range(v_pos, v_pos);
    RETURN r;
END
$$;

REVOKE ALL ON FUNCTION ledger.record_payment_core(text, jsonb, boolean), ledger.notification_owner(jsonb),
    ledger.apply_notification(jsonb, text), ledger.release_parked(text, text, text, text, bytea),
    ledger.payment_named(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.notify(jsonb), ledger.declare_product(text, text, text),
    ledger.link_account(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.notify(jsonb), ledger.declare_product(text, text, text),
    ledger.link_account(text, text, text) TO ledger_writer;
