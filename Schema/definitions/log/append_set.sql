-- Appends a set of events in the given order, each chained to its stream's head, and returns
-- their positions: the one append of the set engine (ledger.apply_payments, ledger.apply_consumes),
-- as ledger.append is the one append of a single event. A set names each stream at most once.
-- With p_lock_heads the streams' rows are locked first, in stream order: a stream another
-- command may append to at the same time under another name (a consume, a link) needs it; a new
-- payment's stream is new and does not. When another writer moved a head between the read and
-- the write, nothing is appended and SQLSTATE 40001 tells the engine to run the batch again.
-- Each event's owner, and its stream's, is ledger.event_owner of its data: a set holds payments
-- and consumes, which all name their user. As in ledger.append, the streams' key begins with the
-- owner and every statement on a stream names it. It runs under its callers' planner settings
-- (generic plans, enable_seqscan off).
CREATE OR REPLACE FUNCTION ledger.append_set(p_streams text[], p_types text[], p_data jsonb[], p_times timestamptz[],
                                             p_lock_heads boolean)
RETURNS bigint[]
LANGUAGE plpgsql AS $$
DECLARE
    v_positions bigint[];
    v_written   bigint;
BEGIN
    IF p_lock_heads THEN
        PERFORM FROM ledger.streams s
          JOIN unnest(p_streams, p_data) AS a(stream, data)
            ON s.user_id = ledger.event_owner(a.data, NULL) AND s.stream = a.stream
         ORDER BY s.stream FOR UPDATE OF s;
    END IF;
    WITH accepted AS (
        SELECT a.n, a.stream, a.type, a.data, a.at, ledger.event_owner(a.data, NULL) AS owner,
               coalesce(s.version, 0) AS version, coalesce(s.head_hash, '\x'::bytea) AS prev
          FROM unnest(p_streams, p_types, p_data, p_times) WITH ORDINALITY AS a(stream, type, data, at, n)
          LEFT JOIN ledger.streams s ON s.user_id = ledger.event_owner(a.data, NULL) AND s.stream = a.stream
    ), hashed AS (
        SELECT accepted.*, ledger.event_hash(prev, stream, version + 1, type, at, data) AS hash FROM accepted
    ), heads AS (
        INSERT INTO ledger.streams (stream, version, head_hash, user_id)
        SELECT stream, version + 1, hash, owner FROM hashed
        ON CONFLICT (user_id, stream) DO UPDATE SET version = excluded.version, head_hash = excluded.head_hash
         WHERE ledger.streams.version = excluded.version - 1
        RETURNING stream
    ), events AS (
        -- Only where the head was written: a stream whose head moved gets no event, and the count
        -- below says so.
        INSERT INTO ledger.events (stream, version, type, data, occurred_at, prev_hash, hash, user_id)
        SELECT stream, version + 1, type, data, at, prev, hash, owner FROM hashed
         WHERE stream IN (SELECT stream FROM heads) ORDER BY n
        RETURNING position
    )
    SELECT (SELECT array_agg(position ORDER BY position) FROM events), (SELECT count(*) FROM heads)
      INTO v_positions, v_written;
    IF v_written <> cardinality(p_streams) THEN
        RAISE EXCEPTION 'a stream of this batch moved while it was appended' USING ERRCODE = 'serialization_failure';
    END IF;
    RETURN v_positions;
END
$$;
REVOKE ALL ON FUNCTION ledger.append_set(text[], text[], jsonb[], timestamptz[], boolean) FROM PUBLIC;
