-- The live projections, in schema ledger: created with the schema, from the one definition
-- above. When a definition of this folder changes, `ledger migrate` rebuilds them from the log
-- (shadow tables, replay, swap) instead of altering them in place; until then appends keep
-- projecting with the new project_range.
-- A projection table the database lacks (install_project_range makes lineage_states when it is
-- missing) is filled here, in the migration's transaction, so that the queries reading it
-- answer from the first commit on; the rebuild that follows replaces it with the replay's.
DO $live$
DECLARE
    v_fresh boolean := to_regclass('ledger.lineage_states') IS NULL;
BEGIN
    IF to_regclass('ledger.payments') IS NULL THEN
        PERFORM ledger.install_projections('ledger');
    ELSE
        PERFORM ledger.install_project_range('ledger');
        IF v_fresh THEN
            BEGIN
                -- Every lineage, whole (no lineage: no arrays, no rows).
                EXECUTE $fill$
                    SELECT ledger.refresh_states(array_agg(store_code), array_agg(original_transaction_id),
                                                 array_agg('-infinity'::timestamptz), NULL)
                      FROM ledger.lineages
                $fill$;
            EXCEPTION WHEN undefined_column OR undefined_function OR undefined_table THEN
                -- Live tables of an older shape (a database adopted from the first releases)
                -- cannot give the states; the rebuild that this migration runs next fills them.
                NULL;
            END;
        END IF;
    END IF;
END
$live$;
