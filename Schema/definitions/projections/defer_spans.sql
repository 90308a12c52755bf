-- The tables it writes, each node's own: ledger.make_spans_scratch (make_spans_scratch.sql).
-- Defers the lineages' spans and states to the end of the transaction: each lineage with its
-- owner (p_owners), the earliest instant its events changed (p_since) and whether its spans
-- change (p_spans). A lineage deferred again in the transaction keeps the earlier instant.
-- A database made before the owners were deferred may hold the earlier forms: dropped here.
DROP FUNCTION IF EXISTS ledger.defer_spans(text, text[], text[]);
DROP FUNCTION IF EXISTS ledger.defer_spans(text, text[], text[], timestamptz[], boolean[]);
CREATE OR REPLACE FUNCTION ledger.defer_spans(p_target text, p_stores text[], p_lineages text[],
                                              p_owners text[], p_since timestamptz[], p_spans boolean[])
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF cardinality(p_stores) = 0 THEN RETURN; END IF;
    -- A worker added since `ledger migrate` ran, reached by a command other than the entry point.
    IF ledger.commands_on_workers() AND to_regclass('ledger.spans_settle') IS NULL THEN
        PERFORM ledger.spans_scratch_here();
    END IF;
    INSERT INTO ledger.spans_due AS d (xact, target, store_code, lineage_id, owner, since, spans)
    SELECT pg_current_xact_id(), p_target, t.store_code, t.lineage_id, t.owner, min(t.since), bool_or(t.spans)
      FROM unnest(p_stores, p_lineages, p_owners, p_since, p_spans) t(store_code, lineage_id, owner, since, spans)
     GROUP BY t.store_code, t.lineage_id, t.owner
    ON CONFLICT (xact, target, store_code, lineage_id) DO UPDATE
       SET since = least(d.since, excluded.since), spans = d.spans OR excluded.spans
     WHERE excluded.since < d.since OR (excluded.spans AND NOT d.spans);
    -- One marker per transaction and schema: its trigger fires once, at commit.
    INSERT INTO ledger.spans_settle (xact, target) VALUES (pg_current_xact_id(), p_target)
    ON CONFLICT DO NOTHING;
END
$$;
REVOKE ALL ON FUNCTION ledger.defer_spans(text, text[], text[], text[], timestamptz[], boolean[]) FROM PUBLIC;
