-- The write path's entry point on a Citus cluster: ledger.execute_commands for commands of one
-- owner, p_user (the user each command names; '' for those that name none, such as a store
-- notification or a refund by paymentSeq). On a distributed log ledger.distribute makes it a
-- distributed function by p_user, colocated with the log, so that Citus runs a call made
-- outside a transaction block on the worker that holds p_user's shards, where the commands'
-- statements on the user's rows are local, and only the key registries' and the keys' locks of
-- other shards go over the network (a 2PC when one is written). The library groups a batch by
-- owner (CommandRouting) and sends each group alone. On one server it is the plain call.
--
-- p_user routes the call and decides nothing: a command of another owner sent with it is
-- answered as through ledger.execute_commands, its statements routed from the worker.
--
-- The call is the whole transaction, so the spans the commands deferred to the commit are
-- settled here, at its end (ledger.settle_spans, as the commit's trigger would): Citus lets a
-- call it delegated reach other nodes while the call runs, and refuses it at the commit ("cannot
-- execute a distributed query from a query on a shard"), where the trigger then finds nothing.
CREATE OR REPLACE FUNCTION ledger.execute_user_commands(p_user text, p_commands ledger.command[])
RETURNS SETOF ledger.command_result
LANGUAGE plpgsql AS $$
BEGIN
    -- Before the commands read anything, the shards they read and write held against a shard
    -- move (ledger.lock_shard_placements): the user's, the one of the notifications parked under
    -- '', and the registry shard of each of their keys (ledger.command_lock_keys, which the
    -- commands take as locks later).
    IF ledger.commands_on_workers() THEN
        PERFORM ledger.lock_shard_placements(ARRAY[p_user, ''],
                                             ARRAY(SELECT unnest(ledger.command_lock_keys(c)) FROM unnest(p_commands) AS c));
    END IF;
    -- A worker added since `ledger migrate` ran makes its scratch tables on its first command.
    IF ledger.commands_on_workers() AND to_regclass('ledger.spans_settle') IS NULL THEN
        PERFORM ledger.spans_scratch_here();
    END IF;
    RETURN QUERY SELECT * FROM ledger.execute_commands(p_commands);
    IF EXISTS (SELECT FROM ledger.spans_settle WHERE xact = pg_current_xact_id() AND target = 'ledger') THEN
        PERFORM ledger.settle_spans('ledger');
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.execute_user_commands(text, ledger.command[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.execute_user_commands(text, ledger.command[]) TO ledger_writer;
