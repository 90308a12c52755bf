-- Keeps a young ledger's planner statistics true to its size: analyses the ledger's tables when
-- the log has passed 1,000 events and at least doubled since they were last analysed, and
-- answers whether it did. The command paths call it now and then after a commit (`ledger
-- ingest` and the library, every 1,000 commands): a session's generic plans are made once, and
-- plans made while the tables were empty (a sequential scan of every payment per consume, the
-- wrong index for a store transaction) would otherwise stay until autovacuum's first ANALYZE,
-- a minute or more later, slowing a new ledger down as it grows. ANALYZE invalidates every
-- session's plans over these tables, so each plans again on real figures. On an established
-- ledger autovacuum keeps the figures, and this answers false after two catalog reads.
CREATE OR REPLACE FUNCTION ledger.refresh_statistics()
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_events bigint;
    v_known  real;
    v_table  regclass;
BEGIN
    SELECT c.reltuples INTO v_known FROM pg_class c WHERE c.oid = 'ledger.events'::regclass;
    SELECT coalesce(max(e.position), 0) INTO v_events FROM ledger.events e;
    -- reltuples is -1 until the table's first VACUUM or ANALYZE.
    IF v_events < 1000 OR (v_known >= 0 AND v_events < 2 * v_known) THEN
        RETURN false;
    END IF;
    -- One session analyses; the others go on (ANALYZE of a table waits for another's).
    IF NOT pg_try_advisory_xact_lock(hashtextextended('ledger:refresh_statistics', 0)) THEN
        RETURN false;
    END IF;
    FOR v_table IN
        SELECT c.oid::regclass FROM pg_class c
         WHERE c.relnamespace = 'ledger'::regnamespace AND c.relkind IN ('r', 'p')
         ORDER BY c.relname
    LOOP
        EXECUTE format('ANALYZE %s', v_table);
    END LOOP;
    RETURN true;
END
$$;
REVOKE ALL ON FUNCTION ledger.refresh_statistics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.refresh_statistics() TO ledger_writer;
