-- Every projection row names its owner (user_id): the owner of the event that wrote it, and for
-- a lineage's entitled spans and states the lineage's user (ledger.install_projections). The
-- tables that lacked it get it here, filled from the log and the lineages, in the migration's
-- transaction: the definitions applied next project into the column at once, and appends must
-- not fail on the live tables until the rebuild that follows replaces them (the rebuild makes
-- the same shape, NOT NULL). A notification is the owner's of its release when it was released
-- (the release moved it to its user), else of its receipt. A database without live projections
-- yet gets them from the definitions, already in this shape.
DO $owners$
BEGIN
    IF to_regclass('ledger.notifications') IS NULL THEN
        RETURN;
    END IF;

    ALTER TABLE ledger.auto_renew_changes ADD COLUMN IF NOT EXISTS user_id text;
    UPDATE ledger.auto_renew_changes x SET user_id = e.user_id
      FROM ledger.events e WHERE e.position = x.position AND x.user_id IS NULL;
    ALTER TABLE ledger.auto_renew_changes ALTER COLUMN user_id SET NOT NULL;

    ALTER TABLE ledger.billing_states ADD COLUMN IF NOT EXISTS user_id text;
    UPDATE ledger.billing_states x SET user_id = e.user_id
      FROM ledger.events e WHERE e.position = x.position AND x.user_id IS NULL;
    ALTER TABLE ledger.billing_states ALTER COLUMN user_id SET NOT NULL;

    ALTER TABLE ledger.notifications ADD COLUMN IF NOT EXISTS user_id text;
    UPDATE ledger.notifications x SET user_id = e.user_id
      FROM ledger.events e WHERE e.position = coalesce(x.released_position, x.position) AND x.user_id IS NULL;
    ALTER TABLE ledger.notifications ALTER COLUMN user_id SET NOT NULL;

    IF to_regclass('ledger.payment_aliases') IS NOT NULL THEN
        ALTER TABLE ledger.payment_aliases ADD COLUMN IF NOT EXISTS user_id text;
        UPDATE ledger.payment_aliases x SET user_id = e.user_id
          FROM ledger.events e WHERE e.position = x.position AND x.user_id IS NULL;
        ALTER TABLE ledger.payment_aliases ALTER COLUMN user_id SET NOT NULL;
    END IF;

    -- Derived at commit from a lineage's rows: left nullable here, so that a span of a lineage
    -- missing from ledger.lineages (none should be) cannot stop the upgrade; the rebuild's
    -- tables are NOT NULL, and ledger verify would name such a row.
    IF to_regclass('ledger.entitled_spans') IS NOT NULL THEN
        ALTER TABLE ledger.entitled_spans ADD COLUMN IF NOT EXISTS user_id text;
        UPDATE ledger.entitled_spans x SET user_id = l.user_id
          FROM ledger.lineages l
         WHERE l.store_code = x.store_code AND l.original_transaction_id = x.lineage_id AND x.user_id IS NULL;
    END IF;
    IF to_regclass('ledger.lineage_states') IS NOT NULL THEN
        ALTER TABLE ledger.lineage_states ADD COLUMN IF NOT EXISTS user_id text;
        UPDATE ledger.lineage_states x SET user_id = l.user_id
          FROM ledger.lineages l
         WHERE l.store_code = x.store_code AND l.original_transaction_id = x.lineage_id AND x.user_id IS NULL;
    END IF;
END
$owners$;
