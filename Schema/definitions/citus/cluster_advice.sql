-- What the operator of a Citus cluster should change for the ledger, one line each: `ledger
-- migrate` prints them and `ledger serve` logs them as it starts. Nothing on one server.
--
-- The readers (the feed, the webhooks) wait after each transaction that spans two workers until
-- Citus's recovery has seen it committed on both (ledger.read_horizon): every
-- citus.recover_2pc_interval, a minute by default, and never when it is -1.
-- SECURITY DEFINER: the server's login may not call ledger.distributed_log(); this takes no
-- argument and reads only the catalogs and a setting.
CREATE OR REPLACE FUNCTION ledger.cluster_advice() RETURNS SETOF text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    recovery_ms bigint;
BEGIN
    IF NOT ledger.distributed_log() THEN
        RETURN;
    END IF;
    SELECT setting::bigint INTO recovery_ms FROM pg_catalog.pg_settings WHERE name = 'citus.recover_2pc_interval';
    IF recovery_ms < 0 THEN
        RETURN NEXT 'citus.recover_2pc_interval is -1 (off): the feed and the webhooks stop at the first transaction that spans two workers; set it to 1s on the coordinator (docs/scale-out.md, "Readers on a cluster")';
    ELSIF recovery_ms > 10000 THEN
        RETURN NEXT format('citus.recover_2pc_interval is %s: the feed and the webhooks trail each transaction that spans two workers by up to that long; set it to 1s on the coordinator (docs/scale-out.md, "Readers on a cluster")',
                           current_setting('citus.recover_2pc_interval'));
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.cluster_advice() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.cluster_advice() TO ledger_reader, ledger_writer;
