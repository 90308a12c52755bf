-- What `ledger migrate` does on a Citus coordinator (docs/scale-out.md): the tables it places
-- across the cluster, once each; the names of those it placed this time. Nothing on a server
-- without the citus extension, or with no worker registered in this database (the extension and
-- the node list are per database): there the ledger is one server's, as it is on plain
-- PostgreSQL. On an existing ledger moved onto Citus, Citus copies each table's rows as it places
-- it.
--
-- The catalogs, small and read by every node, are reference tables (ledger.distribution_plan): a
-- copy on each node, written everywhere at once (2PC). The field rules, read by every payment
-- check (ledger.payment_rules), the API keys, and the products (a projection: a rebuild swaps in
-- a new table, and places it again by calling this in the swap's transaction).
CREATE OR REPLACE FUNCTION ledger.distribute() RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    v_placed text[] := '{}';
    t        text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RETURN v_placed;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND isactive) THEN
        RETURN v_placed;
    END IF;
    FOR t IN SELECT p.table_name FROM ledger.distribution_plan() AS p WHERE p.placement = 'reference' LOOP
        IF NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = t::regclass) THEN
            PERFORM create_reference_table(t::regclass);
            v_placed := v_placed || t;
        END IF;
    END LOOP;
    RETURN v_placed;
END
$$;
REVOKE ALL ON FUNCTION ledger.distribute() FROM PUBLIC;
