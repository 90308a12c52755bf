-- On a Citus cluster: holds Citus's share lock on the placement of each shard a command is about
-- to read and then write, to the end of the transaction: the owners' shards of the log (every
-- table colocated with it shares the lock) and each key's registry shard (ledger.lock_keys'
-- keys: 'payment:…' names a payment_keys row, 'transaction:store:…' a transaction_keys row, and so
-- on). A shard move (citus_move_shard_placement, the rebalancer) takes that lock exclusively on
-- every node for its copy and its commit: the move waits for the command, or the command waits for
-- the move and then reads and writes the shard where it now is.
--
-- Why: Citus takes the lock at a write, not at a read. On a worker, a transaction that read a
-- shard of another node over a connection before a move of that shard writes it, after the move's
-- commit, through the same connection to the placement the move left behind, where the row is
-- lost when Citus's cleanup drops it (Citus 13.2.2: a registry row lost in 1 of 8 rebalances under
-- writes, and three sessions reproduce it every time: docs/scale-out.md, "Rebalancing under
-- writes"). Taken before the command's first read, the lock leaves no such window.
--
-- Called by ledger.execute_user_commands, the write path's entry point on a cluster, before its
-- commands read anything (and by ledger.notification_lock_keys for the one registry it reads to
-- learn the keys). SECURITY DEFINER: Citus grants the lock to the tables' owner only. Its callers
-- ask only where commands run on the workers (ledger.commands_on_workers): one server never
-- calls it.
CREATE OR REPLACE FUNCTION ledger.lock_shard_placements(p_owners text[], p_keys text[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_shards bigint[];
BEGIN
    SELECT array_agg(DISTINCT x.shard ORDER BY x.shard) INTO v_shards FROM (
        SELECT get_shard_id_for_distribution_column('ledger.events', o) AS shard
          FROM unnest(p_owners) AS o WHERE o IS NOT NULL
        UNION ALL
        SELECT CASE k.kind
                   WHEN 'payment' THEN get_shard_id_for_distribution_column('ledger.payment_keys', k.rest)
                   WHEN 'transaction' THEN get_shard_id_for_distribution_column('ledger.transaction_keys', k.named)
                   WHEN 'lineage' THEN get_shard_id_for_distribution_column('ledger.lineage_keys', k.named)
                   WHEN 'notification' THEN get_shard_id_for_distribution_column('ledger.notification_keys', k.named)
                   WHEN 'account' THEN get_shard_id_for_distribution_column('ledger.account_links', k.named)
                   WHEN 'token' THEN get_shard_id_for_distribution_column('ledger.token_keys', decode(k.rest, 'hex'))
               END
          FROM unnest(p_keys) AS key,
               LATERAL (SELECT split_part(key, ':', 1) AS kind,
                               substr(key, strpos(key, ':') + 1) AS rest,
                               -- 'kind:store:value': the value after the store
                               substring(key FROM '^[a-z]+:[^:]*:(.*)$') AS named) AS k
         WHERE key IS NOT NULL) AS x
     WHERE x.shard IS NOT NULL;
    IF v_shards IS NOT NULL THEN
        PERFORM lock_shard_metadata(5, v_shards);   -- 5: ShareLock
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.lock_shard_placements(text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.lock_shard_placements(text[], text[]) TO ledger_writer;
