-- Places a shadow copy of the projections (the tables ledger.install_projections made in
-- target, for a verify or a rebuild) as the live ones are placed, when the log is distributed on
-- a Citus cluster: each table distributed by the same column and colocated with its live table,
-- or a reference table like it. The replay's statements, which read the distributed log and
-- write these tables, then run on the workers shard by shard, as the live projection does; a
-- table left on the coordinator cannot be written by all of them (an UPDATE joined to the log is
-- refused). The names of the tables placed; none on one server. Runs before the replay writes a
-- row, in the replay's transaction.
CREATE OR REPLACE FUNCTION ledger.distribute_shadow(target text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    v_placed text[] := '{}';
    t        record;
BEGIN
    IF NOT ledger.distributed_log() THEN
        RETURN v_placed;
    END IF;
    FOR t IN
        SELECT c.oid::regclass AS shadow, live.logicalrelid AS live, live.partmethod,
               column_to_column_name(live.logicalrelid, live.partkey) AS column_name
          FROM pg_class c
          JOIN pg_namespace n ON n.oid = c.relnamespace
          JOIN pg_dist_partition live ON live.logicalrelid = to_regclass(format('ledger.%I', c.relname))
         WHERE n.nspname = target AND c.relkind = 'r'
         ORDER BY c.relname
    LOOP
        IF t.partmethod = 'n' THEN
            PERFORM create_reference_table(t.shadow);
        ELSE
            PERFORM create_distributed_table(t.shadow, t.column_name, colocate_with => t.live::text);
        END IF;
        v_placed := v_placed || t.shadow::text;
    END LOOP;
    RETURN v_placed;
END
$$;
REVOKE ALL ON FUNCTION ledger.distribute_shadow(text) FROM PUBLIC;
