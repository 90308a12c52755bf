-- Settles the deferred spans just before the transaction commits: the constraint trigger of
-- the transaction's marker in ledger.spans_settle (one per transaction and schema), deferred
-- to the commit. It runs in the transaction, so a failure fails the commit. SECURITY DEFINER:
-- at the commit the current user is the session's (a writer's role), not a command function's
-- owner.
CREATE OR REPLACE FUNCTION ledger.settle_spans_at_commit()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM ledger.settle_spans(NEW.target);
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION ledger.settle_spans_at_commit() FROM PUBLIC;
DROP TRIGGER IF EXISTS spans_settle_at_commit ON ledger.spans_settle;
CREATE CONSTRAINT TRIGGER spans_settle_at_commit AFTER INSERT ON ledger.spans_settle
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger.settle_spans_at_commit();
