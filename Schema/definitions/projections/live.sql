-- The live projections, in schema ledger: created with the schema, from the one definition
-- above. When a definition of this folder changes, `ledger migrate` rebuilds them from the log
-- (shadow tables, replay, swap) instead of altering them in place; until then appends keep
-- projecting with the new project_range.
DO $live$
BEGIN
    IF to_regclass('ledger.payments') IS NULL THEN
        PERFORM ledger.install_projections('ledger');
    ELSE
        PERFORM ledger.install_project_range('ledger');
    END IF;
END
$live$;
