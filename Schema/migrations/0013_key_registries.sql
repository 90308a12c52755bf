-- The key registries (ledger.install_projections): who owns each key that is unique across
-- users, a paymentSeq or an alias, a store transaction, a subscription lineage, a Google
-- purchase token, a store notification id. Live projections get them here, filled from the tables that hold those keys
-- today, in the migration's transaction: the definitions applied next claim keys in them at
-- once, and appends must not fail on the live tables until the rebuild that follows replaces
-- them with tables replayed from the log (ledger migrate checks the shapes agree). A database
-- without live projections yet gets them from the definitions.
DO $registries$
BEGIN
    -- Live projections of this release's shape have notifications; older shapes (a database of
    -- the first releases, adopted) are replaced whole by the rebuild.
    IF to_regclass('ledger.notifications') IS NULL THEN
        RETURN;
    END IF;
    -- Projections made by this release's definitions have them already.
    IF to_regclass('ledger.payment_keys') IS NOT NULL THEN
        RETURN;
    END IF;

    CREATE TABLE ledger.payment_keys (
        payment_seq text PRIMARY KEY,
        user_id     text NOT NULL,
        position    bigint NOT NULL
    );
    INSERT INTO ledger.payment_keys (payment_seq, user_id, position)
    SELECT payment_seq, user_id, recorded_position FROM ledger.payments
    UNION ALL
    SELECT alias_seq, user_id, position FROM ledger.payment_aliases;

    CREATE TABLE ledger.transaction_keys (
        store_code     text NOT NULL,
        transaction_id text NOT NULL,
        user_id        text NOT NULL,
        position       bigint NOT NULL,
        PRIMARY KEY (store_code, transaction_id)
    );
    INSERT INTO ledger.transaction_keys (store_code, transaction_id, user_id, position)
    SELECT store_code, transaction_id, user_id, recorded_position FROM ledger.payments;

    CREATE TABLE ledger.lineage_keys (
        store_code text NOT NULL,
        lineage_id text NOT NULL,
        user_id    text NOT NULL,
        position   bigint NOT NULL,
        PRIMARY KEY (store_code, lineage_id)
    );
    INSERT INTO ledger.lineage_keys (store_code, lineage_id, user_id, position)
    SELECT store_code, original_transaction_id, user_id, first_position FROM ledger.lineages;

    CREATE TABLE ledger.token_keys (
        token_sha256 bytea PRIMARY KEY,
        user_id      text NOT NULL,
        position     bigint NOT NULL
    );
    INSERT INTO ledger.token_keys (token_sha256, user_id, position)
    SELECT DISTINCT ON (token_sha256) token_sha256, user_id, recorded_position FROM ledger.payments
     WHERE store_code = 'GG' AND token_sha256 IS NOT NULL
     ORDER BY token_sha256, recorded_position;

    CREATE TABLE ledger.notification_keys (
        store_code      text NOT NULL,
        notification_id text NOT NULL,
        user_id         text NOT NULL,
        position        bigint NOT NULL,
        PRIMARY KEY (store_code, notification_id)
    );
    INSERT INTO ledger.notification_keys (store_code, notification_id, user_id, position)
    SELECT store_code, notification_id, user_id, position FROM ledger.notifications;

    GRANT SELECT ON ledger.payment_keys, ledger.transaction_keys, ledger.lineage_keys,
                    ledger.token_keys, ledger.notification_keys
                 TO ledger_reader, ledger_writer;
END
$registries$;
