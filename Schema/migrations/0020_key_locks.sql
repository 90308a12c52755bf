-- The keys' locks of a ledger whose commands run on more than one node: a row per command key
-- ('kind:…', ledger.lock_keys), distributed by the key on a Citus cluster (ledger.distribution_plan),
-- so that two commands taking one key wait for each other whichever node runs them, by a row
-- lock Citus's distributed deadlock detection sees. A row is made the first time its key is
-- locked and never changed; on one server, where the keys' advisory locks serialize every
-- command, the table stays empty.
CREATE TABLE IF NOT EXISTS ledger.key_locks (
    key text PRIMARY KEY
);
REVOKE ALL ON ledger.key_locks FROM PUBLIC;
