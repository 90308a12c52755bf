-- Settles the deferred spans just before the transaction commits: the constraint trigger of
-- the transaction's marker in ledger.spans_settle (one per transaction and schema), deferred
-- to the commit (made with the table, ledger.make_spans_scratch). It runs in the transaction,
-- so a failure fails the commit. SECURITY DEFINER: at the commit the current user is the
-- session's (a writer's role), not a command function's owner.
CREATE OR REPLACE FUNCTION ledger.settle_spans_at_commit()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM ledger.settle_spans(NEW.target);
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION ledger.settle_spans_at_commit() FROM PUBLIC;
-- The tables and this trigger on this node (ledger.make_spans_scratch), now that its function
-- exists.
SELECT ledger.make_spans_scratch();
