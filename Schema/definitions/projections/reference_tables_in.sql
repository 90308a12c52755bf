-- The tables of schema p_schema that are Citus reference tables (a copy on every node): none on a
-- server without the extension. A replay leaves them out of its ANALYZE between ranges
-- (ShadowReplay).
CREATE OR REPLACE FUNCTION ledger.reference_tables_in(p_schema text) RETURNS SETOF text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN;
    END IF;
    -- (A statement of its own: the table exists only where the extension does.)
    RETURN QUERY EXECUTE $q$
        SELECT c.relname::text FROM pg_catalog.pg_dist_partition p
          JOIN pg_class c ON c.oid = p.logicalrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND p.partmethod = 'n' AND p.repmodel = 't'
    $q$ USING p_schema;
END
$$;
REVOKE ALL ON FUNCTION ledger.reference_tables_in(text) FROM PUBLIC;
