-- Every place where the log's hash chains do not hold, first position first. Each stream's
-- events must have versions 1..n without gaps, each event's hash must be
-- ledger.event_hash(prev_hash, its own fields), each prev_hash must be the hash of the version
-- before (empty for version 1), and ledger.streams must name the last version and its hash.
-- problem: 'altered' (the event's content or hash was changed), 'rehashed' (the event was
-- changed and its hash recomputed: the next link or the stream head no longer matches),
-- 'removed' (events are missing: position is the event after the gap, or the stream's last
-- remaining event, or null when none remains), 'unrecorded' (events that ledger.append did not
-- write: beyond the stream's head, or under an owner that has no head of the stream, such as a
-- copy of an event under another owner: position is that owner's last event of the stream),
-- 'forked' (the stream's name has heads under more than one owner: one row per head, at that
-- owner's first event. A stream's name is one owner's, which the key registries keep
-- (0015_log_owner_keys.sql), so only an append past the commands makes it; such a stream's other
-- links are checked once it is mended).
-- A chain is one owner's events of a stream (PARTITION BY user_id, stream) and its head the
-- owner's row of ledger.streams: on a distributed log (docs/scale-out.md) each shard checks its
-- own chains, and only what crosses owners is matched across shards: the forks, and a stream
-- moved from '' to its owner (a parked notification released), whose two chains link up.
-- The chain covers stream, version, type, occurred_at and data; position, recorded_at and tx
-- are not hashed. Someone who rewrites a whole stream and its head consistently is only caught
-- by comparing the heads with a copy kept elsewhere.
CREATE OR REPLACE FUNCTION ledger.chain_breaks()
RETURNS TABLE ("position" bigint, stream text, version integer, problem text, detail text)
LANGUAGE sql STABLE AS $$
WITH chained AS (
    SELECT e.user_id, e.position, e.stream, e.version, e.prev_hash, e.hash,
           ledger.event_hash(e.prev_hash, e.stream, e.version, e.type, e.occurred_at, e.data) AS recomputed,
           lag(e.version) OVER w AS prev_version,
           lag(e.hash) OVER w AS prev_event_hash,
           lag(e.position) OVER w AS prev_position,
           lead(e.version) OVER w IS NULL AS is_last
      FROM ledger.events e
    WINDOW w AS (PARTITION BY e.user_id, e.stream ORDER BY e.version, e.position)
), breaks AS (
    -- boundary and link: a chain that starts past version 1 ('start', link its prev_hash) and one
    -- without a head ('headless', link its last hash), which a stream moved to its owner leaves
    -- (moves, below).
    SELECT c.position, c.stream, c.version,
           CASE WHEN c.version = c.prev_version THEN 'unrecorded' ELSE 'removed' END AS problem,
           CASE WHEN c.version = c.prev_version
                THEN format('the stream has another event with this version (position %s): one of them was not written by ledger.append',
                            c.prev_position)
                WHEN c.version = coalesce(c.prev_version, 0) + 2
                THEN format('version %s of the stream is missing before it: that event was removed', c.version - 1)
                ELSE format('versions %s to %s of the stream are missing before it: those events were removed',
                            coalesce(c.prev_version, 0) + 1, c.version - 1) END AS detail,
           c.user_id, CASE WHEN c.prev_version IS NULL THEN 'start' END AS boundary, c.prev_hash AS link
      FROM chained c
     WHERE c.version <> coalesce(c.prev_version, 0) + 1
    UNION ALL
    SELECT c.position, c.stream, c.version, 'altered',
           'its content no longer matches its hash: the event was changed after it was appended',
           c.user_id, NULL, NULL
      FROM chained c
     WHERE c.hash <> c.recomputed
    UNION ALL
    SELECT coalesce(c.prev_position, c.position), c.stream, coalesce(c.prev_version, c.version), 'rehashed',
           CASE WHEN c.prev_version IS NULL
                THEN 'the first event of a stream must have an empty prev_hash: it was changed and re-hashed'
                ELSE format('its hash is not the prev_hash that version %s (position %s) recorded: it was changed and re-hashed, or that link was changed',
                            c.version, c.position) END,
           c.user_id, NULL, NULL
      FROM chained c
     WHERE c.version = coalesce(c.prev_version, 0) + 1
       AND c.prev_hash <> coalesce(c.prev_event_hash, '\x'::bytea)
    UNION ALL
    SELECT l.position, coalesce(s.stream, l.stream), l.version,
           CASE WHEN s.stream IS NULL OR l.version > s.version THEN 'unrecorded'
                WHEN l.version IS NULL OR l.version < s.version THEN 'removed'
                ELSE 'rehashed' END,
           CASE WHEN s.stream IS NULL
                THEN format('the stream has events under %s but no head of that owner in ledger.streams: they were not written by ledger.append',
                            quote_literal(l.user_id))
                WHEN l.version IS NULL
                THEN format('the stream is at version %s but has no events left: all of them were removed', s.version)
                WHEN l.version < s.version
                THEN format('the stream is at version %s but its newest event is this one, version %s: %s removed',
                            s.version, l.version,
                            CASE WHEN s.version - l.version = 1 THEN format('version %s was', s.version)
                                 ELSE format('versions %s to %s were', l.version + 1, s.version) END)
                WHEN l.version > s.version
                THEN format('the stream''s head is at version %s: events after it were not written by ledger.append', s.version)
                ELSE 'its hash is not the stream''s head hash: it was changed and re-hashed, or the head was changed' END,
           coalesce(s.user_id, l.user_id), CASE WHEN s.stream IS NULL THEN 'headless' END, l.hash
      FROM ledger.streams s
      FULL JOIN (SELECT * FROM chained WHERE is_last) l ON l.user_id = s.user_id AND l.stream = s.stream
     WHERE s.stream IS NULL OR l.stream IS NULL OR l.version <> s.version OR l.hash <> s.head_hash
), moves AS (
    -- A stream that moved from '' to its owner (a parked notification released: the release
    -- moves its head, and appends under the owner from the next version on): the chain under ''
    -- without a head, and the owner's chain starting at the next version and linking to its last
    -- event. Those two boundaries are the one chain's, not breaks.
    SELECT a.stream, a.user_id AS owner
      FROM breaks a
      JOIN breaks b ON b.stream = a.stream
     WHERE a.boundary = 'start' AND b.boundary = 'headless' AND b.user_id = '' AND a.user_id <> ''
       AND a.version = b.version + 1 AND a.link = b.link
), forked AS (
    -- Checked apart, after the scan of the log (a filter inside it would keep the sort serial).
    SELECT s.stream, count(*) AS owners FROM ledger.streams s GROUP BY s.stream HAVING count(*) > 1
)
SELECT position, stream, version, problem, detail
  FROM (SELECT b.position, b.stream, b.version, b.problem, b.detail
          FROM breaks b
         WHERE b.stream NOT IN (SELECT f.stream FROM forked f)
           AND NOT (b.boundary = 'start' AND (b.stream, b.user_id) IN (SELECT m.stream, m.owner FROM moves m))
           AND NOT (b.boundary = 'headless' AND b.user_id = '' AND b.stream IN (SELECT m.stream FROM moves m))
        UNION ALL
        SELECT (SELECT min(e.position) FROM ledger.events e WHERE e.user_id = s.user_id AND e.stream = s.stream),
               s.stream, s.version, 'forked',
               format('the stream has heads under %s owners, this one under %s: a stream''s name is one owner''s, so events were appended under another owner than its key''s',
                      f.owners, quote_literal(s.user_id))
          FROM ledger.streams s JOIN forked f ON f.stream = s.stream) found
 ORDER BY position NULLS LAST, stream, version, problem
$$;
REVOKE ALL ON FUNCTION ledger.chain_breaks() FROM PUBLIC;
