-- Makes, on the node it runs on, the tables ledger.defer_spans writes and the trigger that
-- settles them at the commit (ledger.settle_spans_at_commit), and returns the node's group.
-- Each node has its own: the rows are a transaction's notes, written and deleted by the
-- transaction that runs on that node, so a command run on a Citus worker writes its worker's.
-- Idempotent; run on the server or coordinator each time the definitions are applied, once the
-- trigger's function exists (settle_spans_at_commit.sql), and on each worker by `ledger migrate`
-- (ledger.spans_scratch_on).
--
-- The deferred lineages and the settle marker: transient rows, each deleted before the
-- transaction that wrote it commits (so UNLOGGED: nothing in them outlives a transaction).
-- Each deferred lineage's earliest changed instant (its states are computed again from there,
-- install_lineage_states.sql) and whether its spans change too (an auto-renew change leaves
-- them). And its owner, the user of its payments: the spans and states are computed among that
-- owner's rows (on a Citus cluster, on the owner's shard). Named owner, not user_id: the rows
-- are the transaction's notes, not a user's, and stay where it runs (ledger.distribution_plan).
CREATE OR REPLACE FUNCTION ledger.make_spans_scratch() RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    CREATE UNLOGGED TABLE IF NOT EXISTS ledger.spans_due (
        xact       xid8 NOT NULL,
        target     text NOT NULL,
        store_code text NOT NULL,
        lineage_id text NOT NULL,
        PRIMARY KEY (xact, target, store_code, lineage_id)
    );
    CREATE UNLOGGED TABLE IF NOT EXISTS ledger.spans_settle (
        xact   xid8 NOT NULL,
        target text NOT NULL,
        PRIMARY KEY (xact, target)
    );
    ALTER TABLE ledger.spans_due ADD COLUMN IF NOT EXISTS since timestamptz NOT NULL DEFAULT '-infinity',
                                 ADD COLUMN IF NOT EXISTS spans boolean NOT NULL DEFAULT true,
                                 ADD COLUMN IF NOT EXISTS owner text NOT NULL DEFAULT '';
    REVOKE ALL ON ledger.spans_due, ledger.spans_settle FROM PUBLIC;
    DROP TRIGGER IF EXISTS spans_settle_at_commit ON ledger.spans_settle;
    CREATE CONSTRAINT TRIGGER spans_settle_at_commit AFTER INSERT ON ledger.spans_settle
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger.settle_spans_at_commit();
    RETURN ledger.local_node_group();
END
$$;
REVOKE ALL ON FUNCTION ledger.make_spans_scratch() FROM PUBLIC;

