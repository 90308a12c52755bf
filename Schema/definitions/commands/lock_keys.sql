-- Takes the transaction's locks on command keys in the ledger's one global order
-- (ledger.key_order), so that no two transactions can wait for each other on them (no
-- deadlock). A key is 'kind:...', as the command functions build them; nulls are skipped, a key
-- already held is taken again at no cost. A batch of commands calls it first with the keys of
-- all of them (LedgerCommand.lockKeys in Swift); apply_payments with the keys of its items.
-- Before the keys it takes the writers' gate, shared (ledger.writers_gate), which a rebuild's
-- swap takes alone.
--
-- On one server the keys are advisory locks. On a Citus cluster commands run on the users'
-- workers (ledger.commands_on_workers), and an advisory lock is one node's: it would not make a
-- command on another node wait. The keys are then row locks on ledger.key_locks, each on the node
-- that holds its key's shard (ledger.lock_key_rows), in the same order, which Citus's
-- distributed deadlock detection also sees. Row locks cost one server 7.6 % more instructions
-- for a lone purchase and 16.3 % within a set (BENCHMARKS.md, "The keys' locks as row locks"),
-- so one server keeps the advisory ones; which keys each command takes, and their order, are
-- defined once.
CREATE OR REPLACE FUNCTION ledger.lock_keys(p_keys text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    IF ledger.commands_on_workers() THEN
        PERFORM ledger.lock_key_rows(ARRAY(SELECT o.key FROM ledger.key_order(p_keys) AS o));
    ELSE
        -- One statement: each lock is taken as the sorted keys come out.
        PERFORM pg_advisory_xact_lock(o.hash) FROM ledger.key_order(p_keys) AS o;
    END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.lock_keys(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.lock_keys(text[]) TO ledger_writer;
