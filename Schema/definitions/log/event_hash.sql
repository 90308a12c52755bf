-- The canonical text of an event that its hash covers: stream, version, type, time in
-- microseconds since the epoch and the jsonb text of its data, one per line.
CREATE OR REPLACE FUNCTION ledger.event_hash(prev bytea, stream text, version integer, type text,
                                  occurred_at timestamptz, data jsonb)
RETURNS bytea
-- STABLE, not IMMUTABLE: extract from a timestamptz and convert_to are STABLE, and the planner
-- inlines a function into the statement that calls it only when its body is no less stable
-- than its declaration (every append calls it).
LANGUAGE sql STABLE PARALLEL SAFE
RETURN sha256(prev || convert_to(
    stream || E'\n' || version::text || E'\n' || type || E'\n'
    || (extract(epoch FROM occurred_at) * 1000000)::bigint::text || E'\n' || data::text, 'UTF8'));
-- Why the record and consume paths' functions are written as they are, found by profiling the
-- backend under `pgbench` and `ledger-bench` (perf, pg_stat_statements with track = all;
-- BENCHMARKS.md has the figures):
--
-- 1. The payment rules are checked on the event's data before anything is appended
--    (ledger.field_invalid), not by a CHECK constraint on the payments table: the server re-reads
--    a CHECK expression from its catalog text for every statement that inserts a row (about 6 %
--    of a record's CPU), while an expression in a PL/pgSQL function is prepared once per
--    session. So the event log never holds a payment that breaks the rules, and a direct caller
--    gets INVALID_INPUT naming the field instead of a constraint violation.
-- 2. record_payment is PL/pgSQL, whose plans are cached per session, not an SQL-language
--    wrapper, whose body the server parses and plans again on every call.
-- 3. An SQL function that the planner cannot inline runs through the SQL-function executor on
--    every call, which reads the body back from its catalog text and plans it each time. The
--    planner only inlines a function whose body is no less stable than its declaration, so
--    event_hash (every append) and payload_bytes (every payment projected), which use STABLE
--    functions (extract from timestamptz, convert_to), are declared STABLE, not IMMUTABLE, and
--    are inlined into the statements that call them. digest_equal (every consume) has no
--    subquery, which no planner inlines: it compares the SHA-256 of both digests with bytea
--    equality, which stops at the first differing byte of values the caller cannot choose, so
--    its timing tells nothing about the stored digest.
-- 4. The payment is looked up by its name, then (only when absent) by its store transaction:
--    two index probes instead of a BitmapOr, a sort and a limit.
-- 5. project_range runs with jit = off: at 10M events ledger-bench found every consume compiling
--    its UPDATE, because the generic plan's estimate for a position range grows with the log and
--    passes jit_above_cost (a 12x slowdown of ingest, 7.5M events in). The command functions run
--    with jit = off too: none of their statements reads more than a few rows.
-- 6. payment_difference (every duplicate record: each retry of a purchase) is PL/pgSQL: an SQL
--    function with a string body is parsed, analysed and planned on every call (about 1M
--    instructions, as much as recording a new payment).

