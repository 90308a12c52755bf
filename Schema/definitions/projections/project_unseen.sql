-- Rebuild and verification (`ledger rebuild`, `ledger verify`) replay the log into shadow
-- tables made by ledger.install_projections: the same tables and the same project_range as the
-- live append path. This adds only what a replay needs around that one definition: applying
-- the events a snapshot did not show (catch-up).
-- Applies to <target>'s projections every event that `seen` (ledger.log_seen: a snapshot, and
-- on a cluster whose commands run on the workers each worker group's greatest position it
-- showed) did not show: the events committed after it was taken, including those with
-- positions below events it did show (a position is taken at insert, visibility comes at
-- commit). Group 0's (one server's, or the coordinator's) are judged by their transaction ids;
-- a worker group's, whose ids are that worker's, by position: every one above the group's
-- greatest seen position. Consecutive unseen events are applied together, one
-- <target>.project_range call per run of positions, in position order, group 0's first.
-- Returns how many events it applied.
--
-- Run it where no event can commit between its statements: in a REPEATABLE READ transaction
-- (whose ledger.log_seen() then becomes the next `seen`), or while ledger.events is locked in
-- SHARE mode.
DROP FUNCTION IF EXISTS ledger.project_unseen(text, pg_snapshot);
CREATE OR REPLACE FUNCTION ledger.project_unseen(target text, seen text)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    batch    record;
    applied  bigint := 0;
    snapshot pg_snapshot := split_part(seen, ' ', 1)::pg_snapshot;
    v_groups    text[] := (string_to_array(seen, ' '))[2:];   -- 'g:position' each
    v_group     text;
    v_positions bigint[];
BEGIN
    -- Each worker group's: every event above its greatest seen position. The unseen events of
    -- every group go in one call, group 0's above included (so they are not applied above):
    -- the log's positions order each node's events, not one node's against another's, and a
    -- command that ran on one node can follow one of another node on the same payment (a
    -- refund routed by '' after its purchase on the user's worker). project_positions applies
    -- its events set-based, as one range does (docs/scale-out.md, "The replay's order across
    -- nodes").
    IF cardinality(v_groups) > 0 THEN
        -- Statements each index can drive: group 0's by (tx, position), each group's by position.
        v_positions := ARRAY(SELECT e.position FROM ledger.events e
                              WHERE e.tx >= pg_snapshot_xmin(snapshot) AND NOT pg_visible_in_snapshot(e.tx, snapshot)
                                AND e.position < 281474976710656);
        FOREACH v_group IN ARRAY v_groups LOOP
            v_positions := v_positions || ARRAY(
                SELECT e.position FROM ledger.events e
                 WHERE e.position > split_part(v_group, ':', 2)::bigint
                   AND e.position < (split_part(v_group, ':', 1)::bigint + 1) << 48);
        END LOOP;
        -- A group added since the snapshot: all of its events.
        v_positions := v_positions || ARRAY(
            SELECT e.position FROM ledger.events e WHERE e.position >= (cardinality(v_groups)::bigint + 1) << 48);
        IF cardinality(v_positions) > 0 THEN
            EXECUTE format('SELECT %I.project_positions($1, NULL)', target)
              USING ARRAY(SELECT p FROM unnest(v_positions) AS p ORDER BY p);
        END IF;
        PERFORM ledger.settle_spans(target);
        RETURN cardinality(v_positions);
    END IF;
    FOR batch IN
        WITH unseen AS (
            -- (tx, position) index: every unseen event has tx >= the snapshot's xmin.
            SELECT min(e.position) AS first FROM ledger.events e
             WHERE e.tx >= pg_snapshot_xmin(snapshot) AND NOT pg_visible_in_snapshot(e.tx, snapshot)
               AND e.position < 281474976710656
        ), flagged AS (
            SELECT e.position,
                   (e.tx >= pg_snapshot_xmin(snapshot) AND NOT pg_visible_in_snapshot(e.tx, snapshot)) AS is_unseen
              FROM ledger.events e, unseen
             WHERE e.position >= unseen.first AND e.position < 281474976710656
        ), numbered AS (
            SELECT position, is_unseen,
                   row_number() OVER (ORDER BY position)
                   - row_number() OVER (PARTITION BY is_unseen ORDER BY position) AS island
              FROM flagged
        )
        SELECT min(position) AS first, max(position) AS last, count(*) AS events
          FROM numbered WHERE is_unseen GROUP BY island ORDER BY first
    LOOP
        EXECUTE format('SELECT %I.project_range($1, $2)', target) USING batch.first, batch.last;
        applied := applied + batch.events;
    END LOOP;
    -- Their entitled spans now, before the caller swaps the tables (entitled_spans_step.sql).
    PERFORM ledger.settle_spans(target);
    RETURN applied;
END
$$;
REVOKE ALL ON FUNCTION ledger.project_unseen(text, text) FROM PUBLIC;
