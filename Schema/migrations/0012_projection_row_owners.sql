-- Every projection row names its owner (user_id): the owner of the event that wrote it, and for
-- a lineage's entitled spans and states the lineage's user (ledger.install_projections). The
-- tables that lacked it get it here, filled from the log and the lineages, in the migration's
-- transaction: the definitions applied next project into the column at once, and appends must
-- not fail on the live tables until the rebuild that follows replaces them (the rebuild makes
-- the same shape, NOT NULL). A notification is the owner's of its release when it was released
-- (the release moved it to its user), else of its receipt. A database without live projections
-- yet gets them from the definitions, already in this shape.
DO $owners$
DECLARE
    t text;
BEGIN
    -- Live projections of this release's shape have notifications; older shapes (a database of
    -- the first releases, adopted) are replaced whole by the rebuild.
    IF to_regclass('ledger.notifications') IS NULL THEN
        RETURN;
    END IF;

    -- Fed by events: the owner of the event that wrote the row (every row has one).
    FOREACH t IN ARRAY ARRAY['auto_renew_changes', 'billing_states', 'notifications', 'payment_aliases'] LOOP
        CONTINUE WHEN to_regclass('ledger.' || t) IS NULL;
        EXECUTE format('ALTER TABLE ledger.%I ADD COLUMN IF NOT EXISTS user_id text', t);
        EXECUTE format('UPDATE ledger.%I x SET user_id = e.user_id FROM ledger.events e
                         WHERE e.position = %s AND x.user_id IS NULL',
                       t, CASE t WHEN 'notifications' THEN 'coalesce(x.released_position, x.position)' ELSE 'x.position' END);
        EXECUTE format('ALTER TABLE ledger.%I ALTER COLUMN user_id SET NOT NULL', t);
    END LOOP;

    -- Derived at commit from a lineage's rows: the lineage's user. Left nullable here, so that a
    -- row of a lineage missing from ledger.lineages (none should be) cannot stop the upgrade;
    -- the rebuild's tables are NOT NULL, and ledger verify would name such a row.
    FOREACH t IN ARRAY ARRAY['entitled_spans', 'lineage_states'] LOOP
        CONTINUE WHEN to_regclass('ledger.' || t) IS NULL;
        EXECUTE format('ALTER TABLE ledger.%I ADD COLUMN IF NOT EXISTS user_id text', t);
        EXECUTE format('UPDATE ledger.%I x SET user_id = l.user_id FROM ledger.lineages l
                         WHERE l.store_code = x.store_code AND l.original_transaction_id = x.lineage_id
                           AND x.user_id IS NULL', t);
    END LOOP;
END
$owners$;
