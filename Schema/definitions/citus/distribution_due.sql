-- Whether ledger.distribute has the log to place: the citus extension, a worker, and the log not
-- distributed yet. `ledger migrate` then makes every definition again first, if it has not this
-- time: Citus sends a function to the workers when it is made, and a ledger moved onto the
-- cluster has functions older than the extension, which the workers run inside the statements
-- sent to them (the status and access rules, the event hash).
CREATE OR REPLACE FUNCTION ledger.distribution_due() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND isactive)
       AND NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'ledger.events'::regclass);
END
$$;
REVOKE ALL ON FUNCTION ledger.distribution_due() FROM PUBLIC;
