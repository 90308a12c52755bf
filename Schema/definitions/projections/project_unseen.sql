-- Rebuild and verification (`ledger rebuild`, `ledger verify`) replay the log into shadow
-- tables made by ledger.install_projections: the same tables and the same project_range as the
-- live append path. This adds only what a replay needs around that one definition: applying
-- the events a snapshot did not show (catch-up).
-- Applies to <target>'s projections every event that the snapshot `seen` did not show: the
-- events committed after it was taken, including those with positions below events it did show
-- (a position is taken at insert, visibility comes at commit). Consecutive unseen events are
-- applied together, one <target>.project_range call per run of positions, in position order.
-- Returns how many events it applied.
--
-- Run it where no event can commit between its statements: in a REPEATABLE READ transaction
-- (whose snapshot then becomes the next `seen`), or while ledger.events is locked in SHARE mode.
CREATE OR REPLACE FUNCTION ledger.project_unseen(target text, seen pg_snapshot)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    batch   record;
    applied bigint := 0;
BEGIN
    FOR batch IN
        WITH unseen AS (
            -- (tx, position) index: every unseen event has tx >= the snapshot's xmin.
            SELECT min(e.position) AS first FROM ledger.events e
             WHERE e.tx >= pg_snapshot_xmin(seen) AND NOT pg_visible_in_snapshot(e.tx, seen)
        ), flagged AS (
            SELECT e.position,
                   (e.tx >= pg_snapshot_xmin(seen) AND NOT pg_visible_in_snapshot(e.tx, seen)) AS is_unseen
              FROM ledger.events e, unseen
             WHERE e.position >= unseen.first
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
REVOKE ALL ON FUNCTION ledger.project_unseen(text, pg_snapshot) FROM PUBLIC;
