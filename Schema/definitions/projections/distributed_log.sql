-- Whether the log is distributed on a Citus cluster (ledger.events placed by owner): the
-- projection's installers give their functions what names each statement's shard there, custom
-- plans and the owner as a filter of its own (install_project_range.sql), and leave both out on
-- one server, where they would only cost.
CREATE OR REPLACE FUNCTION ledger.distributed_log() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT FROM pg_catalog.pg_dist_partition WHERE logicalrelid = 'ledger.events'::regclass);
END
$$;
REVOKE ALL ON FUNCTION ledger.distributed_log() FROM PUBLIC;
