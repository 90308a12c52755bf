-- Takes the transaction's locks on command keys in the ledger's one global order
-- (ledger.key_order), so that no two transactions can wait for each other on them (no
-- deadlock). A key is 'kind:...', as the command functions build them; nulls are skipped, a key
-- already held is taken again at no cost. A batch of commands calls it first with the keys of
-- all of them (LedgerCommand.lockKeys in Swift); apply_payments with the keys of its items.
-- Before the keys it takes the writers' gate, shared (ledger.writers_gate), which a rebuild's
-- swap takes alone.
--
-- Where every command runs on one node (one server, or a Citus cluster written through its
-- coordinator) the keys are advisory locks of that node. Where commands run on the workers too
-- (the appends take a worker's position: ledger.appended_through_the_coordinator) an advisory
-- lock is one node's and would not make a command on another node wait: the keys are then row
-- locks on ledger.key_locks, each on the node that holds its key's shard (ledger.lock_key_rows),
-- in the same order. Row locks cost one server 7.6 % more instructions for a lone purchase and
-- 16.3 % within a set (BENCHMARKS.md, "The keys' locks as row locks"), so one server keeps the
-- advisory ones; which keys each command takes, and their order, are defined once.
CREATE OR REPLACE FUNCTION ledger.lock_keys(p_keys text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    -- Whether the appends take a worker's first position, that is whether commands run on the
    -- workers too.
    IF ledger.appended_through_the_coordinator(281474976710656) THEN
        PERFORM ledger.lock_key_rows(ARRAY(SELECT o.key FROM ledger.key_order(p_keys) AS o));
    ELSE
        -- One statement: each lock is taken as the sorted keys come out.
        PERFORM pg_advisory_xact_lock(o.hash) FROM ledger.key_order(p_keys) AS o;
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.lock_keys(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.lock_keys(text[]) TO ledger_writer;
