-- The projections, defined once: ledger.install_projections(schema) creates every projection
-- table in the given schema, and ledger.install_project_range(schema) the functions that apply
-- events to them, project_positions(positions) and project_range(from, to). 'ledger' holds the
-- live projections; a rebuild makes a shadow copy in another schema, replays the log into it
-- with the same body, and swaps. Commands call ledger.project_positions for the events they
-- just wrote. The statements are static SQL, the same text for every schema: the target is
-- first on search_path while they run (install_project_range.sql).
--
-- Projection tables are derived data: their shape changes here, and `ledger migrate` then
-- rebuilds them from the log (shadow and swap) rather than altering them in place. Appends
-- project with the new definitions from the migration's commit until the swap, so a column the
-- new statements write is added to the live tables by a versioned migration in that same
-- transaction (as 0012_projection_row_owners.sql does), for the rebuild to replace.
-- ProjectionSet.swift lists the same tables for the rebuild and `ledger verify`.
--
-- Every row fed by events names its owner (user_id): the owner of the event that wrote it, so
-- that a row lives where its events live once the log is distributed by owner, and every
-- statement of project_positions joins a row to its event by the owner as well as by its key
-- (docs/scale-out.md): a lineage's auto-renew and billing changes are its user's, and so are
-- its entitled spans and states, which the commit derives from its rows (ledger.settle_spans).
-- Every key of a user-owned table includes its owner, last: a table distributed by user_id needs
-- it in every unique key, and the key's own columns first still serve the lookups by a key
-- alone (a consume by its paymentSeq, a notification by its id). That a key names one thing of
-- one user across all users is the key registries' to keep (payment_keys … notification_keys,
-- below), each keyed by the key alone and claimed in the event's transaction.
CREATE OR REPLACE FUNCTION ledger.install_projections(target text)
RETURNS void
LANGUAGE plpgsql
-- The caller's search_path comes back at exit (the body sets the target's).
SET search_path = pg_catalog, pg_temp
AS $install$
BEGIN
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', target);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO ledger_writer, ledger_reader', target);
    -- The tables below are made in the target, first on search_path.
    PERFORM set_config('search_path', format('%I, pg_catalog, pg_temp', target), true);
    -- One row per payment (a first purchase or a renewal), with its consume and refund. A
    -- payment first learned from a store notification has no purchase token of its own
    -- (token_sha256 null); an SDK line naming it later gives it one (linked_token_sha256).
    -- The rules a payment must meet are checked on the event before it is appended
    -- (ledger.field_invalid, in ledger.apply_payments), not by a CHECK here: the server re-reads a CHECK's
    -- catalog text for every row it inserts.
    CREATE TABLE payments (
        payment_seq             text NOT NULL,
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
        token_sha256            bytea,
        kind                    text NOT NULL,
        recorded_position       bigint NOT NULL,
        recorded_at             timestamptz NOT NULL,
        consumed_at             timestamptz,
        consumed_position       bigint,
        refunded_at             timestamptz,
        refund_reason           text,
        refunded_position       bigint,
        linked_token_sha256     bytea,
        reversed_refund_at      timestamptz,
        refund_reversed_at      timestamptz,
        extended_expiry_time    timestamptz,
        extended_at             timestamptz,
        PRIMARY KEY (payment_seq, user_id),
        CONSTRAINT payments_store_transaction_key UNIQUE (store_code, transaction_id, user_id)
    );
    CREATE INDEX payments_unconsumed_idx ON payments (user_id, purchase_time, payment_seq)
        WHERE consumed_at IS NULL AND refunded_at IS NULL AND product_type <> 'AUTO_RENEWABLE';
    -- A lineage's payments by purchase time, with what subscriptions_at reads of every one
    -- of them: one index-only range scan per lineage. (transaction_id is left out: with the
    -- lineage id beside it, ids of 255 four-byte characters would pass the B-tree's entry
    -- limit; only a lineage with a billing state needs it, from the heap.)
    CREATE INDEX payments_lineage_idx ON payments (store_code, lineage_id, purchase_time)
        INCLUDE (payment_seq, expiry_time, extended_expiry_time, extended_at,
                 refunded_at, reversed_refund_at, refund_reversed_at)
        WHERE lineage_id IS NOT NULL;
    CREATE INDEX payments_purchase_time_idx ON payments (purchase_time);
    CREATE INDEX payments_refunded_at_idx ON payments (refunded_at) WHERE refunded_at IS NOT NULL;
    CREATE INDEX payments_consumed_at_idx ON payments (consumed_at) WHERE consumed_at IS NOT NULL;

    -- One row per subscription lineage: who owns it and what it sells (from its first payment).
    CREATE TABLE lineages (
        store_code              text NOT NULL,
        original_transaction_id text NOT NULL,
        user_id                 text NOT NULL,
        product_id              text NOT NULL,
        product_type            text NOT NULL,
        first_position          bigint NOT NULL,
        PRIMARY KEY (store_code, original_transaction_id, user_id)
    );
    -- A user's lineages with what subscriptions_at returns of them: an index-only scan, in
    -- the order the library asks for (store, then originalTransactionId), so no sort.
    CREATE INDEX lineages_user_idx ON lineages (user_id, store_code, original_transaction_id)
        INCLUDE (product_id, product_type);

    -- Auto-renew turned off (a cancel), at the cancel's own time.
    CREATE TABLE auto_renew_changes (
        store_code              text NOT NULL,
        original_transaction_id text NOT NULL,
        changed_at              timestamptz NOT NULL,
        auto_renewing           boolean NOT NULL,
        position                bigint NOT NULL,
        user_id                 text NOT NULL,  -- its event's owner (the lineage's user)
        PRIMARY KEY (store_code, original_transaction_id, position, user_id)
    );
    -- A lineage's latest change at an instant: one backward index-only step.
    CREATE INDEX auto_renew_changes_at_idx ON auto_renew_changes
        (store_code, original_transaction_id, changed_at, position) INCLUDE (auto_renewing);

    -- Each subscription lineage's entitled time (docs/contract.md §3.2: active or inGracePeriod)
    -- as spans in merge order, once per sandbox scope (with_sandbox: sandbox payments
    -- count), kept by project_range for every lineage an event touches (the rules are
    -- written there). Each row carries what merging the lineage's spans up to it gives:
    -- the start of its interval, the interval's end so far, the latest natural and billing
    -- end so far, and the start of the next span of the same interval (null when the
    -- interval ends with it). analytics.access reads a window's intervals from it with one
    -- range scan instead of building and sorting them: an index-only scan for
    -- analytics.subscribers, whose columns the window index carries. The rows a window
    -- keeps can lie on nearly every page of the table (a rebuild writes the spans lineage
    -- after lineage, the live path as each lineage renews), so reading them from the heap
    -- reads nearly the whole table: 88,589 of its 90,680 pages for 30 days of the quick 10M
    -- ledger (BENCHMARKS.md). An index-only scan needs the visibility map that vacuum keeps.
    CREATE TABLE entitled_spans (
        store_code          text NOT NULL,
        lineage_id          text NOT NULL,
        with_sandbox        boolean NOT NULL,
        n                   integer NOT NULL,   -- the span's place in merge order
        product_id          text NOT NULL,
        starts_at           timestamptz NOT NULL,
        ends_at             timestamptz NOT NULL,
        interval_start      timestamptz NOT NULL,
        ends_so_far         timestamptz NOT NULL,
        natural_end_so_far  timestamptz,
        billing_end_so_far  timestamptz,
        next_start          timestamptz,
        user_id             text NOT NULL,  -- the lineage's user
        PRIMARY KEY (store_code, lineage_id, with_sandbox, n, user_id)
    );
    CREATE INDEX entitled_spans_window_idx ON entitled_spans (with_sandbox, ends_so_far)
        INCLUDE (starts_at, next_start, store_code, product_id, interval_start);

    -- Each restore a user asked for, with the payments it recorded.
    CREATE TABLE restores (
        position     bigint NOT NULL,
        user_id      text NOT NULL,
        store_code   text NOT NULL,
        restored_at  timestamptz NOT NULL,
        recorded     text[] NOT NULL,
        item_count   integer NOT NULL,
        PRIMARY KEY (position, user_id)
    );
    CREATE INDEX restores_user_idx ON restores (user_id, store_code, restored_at);

    -- Google's notifications name a subscription by its purchase token (compared by digest).
    CREATE INDEX payments_google_token_idx ON payments (token_sha256) WHERE store_code = 'GG';
    -- A `product` line is refused when payments of the product have another type.
    CREATE INDEX payments_product_idx ON payments (store_code, product_id);

    -- Billing states of a lineage, each from its notification's own time.
    CREATE TABLE billing_states (
        store_code              text NOT NULL,
        original_transaction_id text NOT NULL,
        changed_at              timestamptz NOT NULL,
        state                   text NOT NULL,  -- inGracePeriod | billingRetry | onHold | paused | none
        grace_expires_at        timestamptz,
        position                bigint NOT NULL,
        user_id                 text NOT NULL,  -- its event's owner (the lineage's user)
        PRIMARY KEY (store_code, original_transaction_id, position, user_id)
    );
    -- A lineage's billing state at an instant: one backward index-only step.
    CREATE INDEX billing_states_at_idx ON billing_states
        (store_code, original_transaction_id, changed_at, position) INCLUDE (state, grace_expires_at);

    -- Every notification received, by the store's id; parked ones with the keys that can
    -- release them. Its owner is its stream's: '' until it is released to a user, who then
    -- owns it (the release moves the row, as ledger.release_parked moves the stream's).
    CREATE TABLE notifications (
        store_code        text NOT NULL,
        notification_id   text NOT NULL,
        notification_type text NOT NULL,
        effect            text NOT NULL,
        effective_at      timestamptz NOT NULL,
        position          bigint NOT NULL,
        outcome           text NOT NULL,        -- applied | ignored | parked
        parked            boolean NOT NULL,
        released_position bigint,
        lineage_key       text,
        transaction_key   text,
        account_key       text,
        token_key         bytea,
        user_id           text NOT NULL,
        PRIMARY KEY (store_code, notification_id, user_id),
        UNIQUE (position, user_id)
    );
    CREATE INDEX notifications_parked_idx ON notifications (store_code, effective_at, position) WHERE parked;

    -- The type a `product` line declared for a store product.
    CREATE TABLE products (
        store_code   text NOT NULL,
        product_id   text NOT NULL,
        product_type text NOT NULL,
        price        numeric,       -- a declared price (Google one-time purchases, §6.3)
        currency     text,
        position     bigint NOT NULL,
        PRIMARY KEY (store_code, product_id)
    );

    -- Whose notifications carry an `appAccountToken`.
    CREATE TABLE account_links (
        store_code        text NOT NULL,
        app_account_token text NOT NULL,
        user_id           text NOT NULL,
        position          bigint NOT NULL,
        PRIMARY KEY (store_code, app_account_token)
    );

    -- Other paymentSeqs that name a payment first learned from a notification.
    CREATE TABLE payment_aliases (
        alias_seq   text NOT NULL,
        payment_seq text NOT NULL,
        position    bigint NOT NULL,
        user_id     text NOT NULL,  -- the payment's user
        PRIMARY KEY (alias_seq, user_id)
    );

    -- The key registries: who owns each key that is unique across users, one row per key.
    -- Each is written in the transaction of the event that claims its key, by the statement
    -- that projects it, and rebuilt with the rest. Their primary keys are the global keys the
    -- ledger promises (a paymentSeq, a store transaction, a subscription lineage, a store
    -- notification id names one thing of one user): a second owner's claim of such a key fails
    -- its event's transaction. A Google purchase token is no such promise: its registry keeps
    -- the first owner (token_keys, below). On a Citus cluster each registry is distributed by
    -- its key, and the tables above by their owner (docs/scale-out.md). An alias names a payment
    -- too, so it is in the payments' registry. Account tokens have none: account_links is keyed
    -- by the token alone, and is itself the registry of who owns one.
    -- A key names a payment, with its owner, so that a command finds the payment's row by the
    -- registry's one probe and the owner's primary key.
    CREATE TABLE payment_keys (
        payment_seq text PRIMARY KEY,   -- a payment's name, or an alias
        user_id     text NOT NULL,
        position    bigint NOT NULL,    -- the event that claimed it
        names_seq   text NOT NULL       -- the payment it names: itself, or the one an alias names
    );
    CREATE TABLE transaction_keys (
        store_code     text NOT NULL,
        transaction_id text NOT NULL,
        user_id        text NOT NULL,
        position       bigint NOT NULL,
        payment_seq    text NOT NULL,   -- the payment that holds it
        PRIMARY KEY (store_code, transaction_id)
    );
    CREATE TABLE lineage_keys (
        store_code text NOT NULL,
        lineage_id text NOT NULL,
        user_id    text NOT NULL,
        position   bigint NOT NULL,
        PRIMARY KEY (store_code, lineage_id)
    );
    -- A Google payment's own purchase token (its digest), claimed by the first payment that has
    -- it: a subscription's renewals share their token. Google names a purchase or a subscription
    -- by it, and its notifications find their user by it.
    CREATE TABLE token_keys (
        token_sha256 bytea PRIMARY KEY,
        user_id      text NOT NULL,
        position     bigint NOT NULL
    );
    -- A notification's owner is '' until it is released to a user (as its row's).
    CREATE TABLE notification_keys (
        store_code      text NOT NULL,
        notification_id text NOT NULL,
        user_id         text NOT NULL,
        position        bigint NOT NULL,
        PRIMARY KEY (store_code, notification_id)
    );

    GRANT SELECT ON payments, lineages, auto_renew_changes, restores, billing_states,
                    notifications, products, account_links, payment_aliases,
                    entitled_spans, payment_keys, transaction_keys, lineage_keys, token_keys, notification_keys
                 TO ledger_reader, ledger_writer;
    PERFORM ledger.install_project_range(target);
END
$install$;
REVOKE ALL ON FUNCTION ledger.install_projections(text) FROM PUBLIC;
