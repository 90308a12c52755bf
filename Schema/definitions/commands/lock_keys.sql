-- Takes the transaction's advisory locks on command keys in the ledger's one global order, so
-- that no two transactions can wait for each other on them (no deadlock): first by the key's
-- kind, in the order in which every command function takes its own (restore, notification,
-- account, payment, store transaction, lineage, Google token, product), then by the key's hash.
-- A key is 'kind:...', as the command functions build them; nulls are skipped, a key already
-- held is taken again at no cost. A batch of commands calls it first with the keys of all of
-- them (LedgerCommand.lockKeys in Swift); apply_payments with the keys of its items. Before the
-- keys it takes the writers' gate, shared (ledger.writers_gate), which a rebuild's swap takes
-- alone.
CREATE OR REPLACE FUNCTION ledger.lock_keys(p_keys text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    -- One statement: each lock is taken as the sorted keys come out.
    PERFORM pg_advisory_xact_lock(hash) FROM (
        SELECT hash FROM (
            SELECT DISTINCT array_position(
                       ARRAY['restore', 'notification', 'account', 'payment', 'transaction', 'lineage', 'token', 'product'],
                       split_part(k, ':', 1)) AS rank,
                   hashtextextended(k, 0) AS hash
              FROM unnest(p_keys) AS k
             WHERE k IS NOT NULL) AS keys
         ORDER BY rank NULLS LAST, hash) AS ordered;
END
$$;
REVOKE ALL ON FUNCTION ledger.lock_keys(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.lock_keys(text[]) TO ledger_writer;
