-- Refreshes the spans and states the transaction deferred for the schema (ledger.defer_spans),
-- now. The commit does it (settle_spans_at_commit.sql); a caller that reads the spans or
-- ledger.subscriptions_at before its own commit calls it first.
CREATE OR REPLACE FUNCTION ledger.settle_spans(p_target text)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_stores   text[];
    v_lineages text[];
    v_owners   text[];      -- each lineage's owner
    v_owner    text;        -- the owner of every lineage, or null when they have several
    v_since    timestamptz[];
    v_spans    boolean[];
    v_keys     bigint[];    -- each lineage's shard, on a Citus cluster
    v_each     bigint[];    -- the shards refreshed apart, or {null}: every lineage at once
    v_key      bigint;
    s_owners   text[];      -- the owners refreshed together (null: every owner, on one server)
    s_stores   text[];      -- their lineages
    s_lineages text[];
    s_since    timestamptz[];
    s_spans    boolean[];
BEGIN
    DELETE FROM ledger.spans_settle WHERE xact = pg_current_xact_id() AND target = p_target;
    WITH due AS (
        DELETE FROM ledger.spans_due WHERE xact = pg_current_xact_id() AND target = p_target
        RETURNING store_code, lineage_id, owner, since, spans)
    SELECT coalesce(array_agg(store_code), '{}'), coalesce(array_agg(lineage_id), '{}'),
           coalesce(array_agg(owner), '{}'), CASE WHEN count(DISTINCT owner) = 1 THEN min(owner) END,
           coalesce(array_agg(since), '{}'), coalesce(array_agg(spans), '{}')
      INTO v_stores, v_lineages, v_owners, v_owner, v_since, v_spans FROM due;
    -- Two transactions can change one lineage under different command keys (a refund locks its
    -- payment, a renewal its lineage, a Google notification its token): each settles it from
    -- what it sees, and unserialized, the later one would fail on the earlier one's rows (a
    -- duplicate key) or keep states computed without the other's change. So a settle first
    -- takes a lock per lineage, in one order, on keys no command takes ('settle:…'): a holder
    -- waits for nothing else until it commits, so no deadlock, and the next settler of the
    -- lineage waits for that commit and reads it. Only the live schema has concurrent writers;
    -- a replay (every lineage of the log at once) settles a shadow no one else writes.
    -- On a Citus cluster, where commands run on the workers (ledger.commands_on_workers), two
    -- settlers of one lineage can run on two nodes, whose advisory locks do not meet: the keys
    -- are then row locks of ledger.key_locks, in the keys' one order, as ledger.lock_keys takes
    -- a command's.
    IF p_target = 'ledger' AND cardinality(v_stores) > 0 THEN
        IF ledger.commands_on_workers() THEN
            PERFORM ledger.lock_key_rows(ARRAY(
                SELECT o.key FROM ledger.key_order(ARRAY(
                    SELECT DISTINCT 'settle:' || t.store_code || ':' || t.lineage_id
                      FROM unnest(v_stores, v_lineages) t(store_code, lineage_id))) AS o));
        ELSE
            PERFORM pg_advisory_xact_lock(k.hash) FROM (
                SELECT DISTINCT hashtextextended('settle:' || t.store_code || ':' || t.lineage_id, 0) AS hash
                  FROM unnest(v_stores, v_lineages) t(store_code, lineage_id)
                 ORDER BY 1) k;
        END IF;
    END IF;
    -- A schema dropped since (a shadow after its swap) has nothing left to keep.
    IF cardinality(v_stores) = 0 OR to_regprocedure(format('%I.refresh_spans(text[], text[], text[])', p_target)) IS NULL THEN
        RETURN;
    END IF;
    -- On a Citus cluster the lineages of several owners (a batch's, a replay's) are refreshed a
    -- shard at a time: refresh_spans and refresh_states name the shard's owners on every table
    -- (`user_id = ANY (owners)`), so that Citus sends each statement to that one shard whole,
    -- where it plans no statement that joins the rows of several shards. Owner by owner, a
    -- replay of the demo's 195,285 events settles in 195 s on this machine's cluster instead of
    -- 2.8 s, a custom plan and a round trip per statement for each of its owners (BENCHMARKS.md).
    -- One server refreshes them all at once.
    IF v_owner IS NULL AND ledger.distributed_log() THEN
        -- (A statement of its own: the function exists only where the extension does.)
        EXECUTE $keys$
            SELECT array_agg(k ORDER BY n), array_agg(DISTINCT k)
              FROM unnest($1) WITH ORDINALITY AS t(o, n),
                   LATERAL (SELECT get_shard_id_for_distribution_column('ledger.events', t.o) AS k) x
        $keys$ INTO v_keys, v_each USING v_owners;
    ELSE
        v_each := ARRAY[NULL::bigint];
    END IF;
    FOREACH v_key IN ARRAY v_each LOOP
        IF v_key IS NULL THEN
            s_stores := v_stores; s_lineages := v_lineages; s_since := v_since; s_spans := v_spans;
            s_owners := CASE WHEN v_owner IS NOT NULL THEN ARRAY[v_owner] END;
        ELSE
            SELECT array_agg(t.s), array_agg(t.l), array_agg(t.at), array_agg(t.f), array_agg(DISTINCT t.o)
              INTO s_stores, s_lineages, s_since, s_spans, s_owners
              FROM unnest(v_stores, v_lineages, v_owners, v_since, v_spans, v_keys) AS t(s, l, o, at, f, k)
             WHERE t.k = v_key;
        END IF;
        IF true = ANY (s_spans) THEN
            EXECUTE format('SELECT %I.refresh_spans($1, $2, $3)', p_target)
              USING ARRAY(SELECT s FROM unnest(s_stores, s_spans) t(s, f) WHERE f),
                    ARRAY(SELECT l FROM unnest(s_lineages, s_spans) t(l, f) WHERE f),
                    s_owners;
        END IF;
        EXECUTE format('SELECT %I.refresh_states($1, $2, $3, $4)', p_target) USING s_stores, s_lineages, s_since, s_owners;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION ledger.settle_spans(text) FROM PUBLIC;
