-- The advisory lock every command takes first, shared (ledger.lock_keys; a command without keys
-- takes it alone: a consume, a refund, an account link, a product), and a rebuild's swap takes
-- alone before it locks the projection tables (ProjectionRebuilder+Swap.swift). Once the swap
-- holds it, the commands in flight have ended, and a new one waits before it has touched any
-- table; while a command holds it, no swap changes a table under it. A command reads a key's
-- registry in a statement of its own and the owner's rows in the next (a Citus cluster keeps
-- them on different nodes), and a new payment reads no payments row before its projection.
-- Without the gate, a command holding a registry while it waited for a table the swap held made
-- the swap give up its locks and try again, without end; and a lookup blocked by the swap read
-- with its caller's snapshot, older than the swap, and missed what the swap's catch-up had just
-- written (RebuildUnderLoadTests). A key of the bigint space ledger.lock_keys uses, made of a
-- name that is no command key (those are 'kind:…').
CREATE OR REPLACE FUNCTION ledger.writers_gate() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN hashtextextended('ledger writers', 0);
REVOKE ALL ON FUNCTION ledger.writers_gate() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.writers_gate() TO ledger_writer;
