-- The deferred lineages and the settle marker: transient rows, each deleted before the
-- transaction that wrote it commits (so UNLOGGED: nothing in them outlives a transaction).
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
REVOKE ALL ON ledger.spans_due, ledger.spans_settle FROM PUBLIC;

-- Defers the lineages' spans to the end of the transaction.
CREATE OR REPLACE FUNCTION ledger.defer_spans(p_target text, p_stores text[], p_lineages text[])
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF cardinality(p_stores) = 0 THEN RETURN; END IF;
    INSERT INTO ledger.spans_due (xact, target, store_code, lineage_id)
    SELECT pg_current_xact_id(), p_target, t.store_code, t.lineage_id
      FROM unnest(p_stores, p_lineages) t(store_code, lineage_id)
    ON CONFLICT DO NOTHING;
    -- One marker per transaction and schema: its trigger fires once, at commit.
    INSERT INTO ledger.spans_settle (xact, target) VALUES (pg_current_xact_id(), p_target)
    ON CONFLICT DO NOTHING;
END
$$;
REVOKE ALL ON FUNCTION ledger.defer_spans(text, text[], text[]) FROM PUBLIC;

