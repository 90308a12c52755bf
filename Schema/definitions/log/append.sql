-- Appends one event to a stream and returns its position. p_expected_version, when not null,
-- is the version the caller last saw (0: the stream must not exist yet); a mismatch raises
-- SQLSTATE 40001 so that the caller can re-read and retry (optimistic concurrency).
-- The stream's row lock serialises the writers of one stream, and only them.
-- The event's owner is ledger.event_owner(p_data, p_user_id), and its stream is that owner's:
-- the streams' and the events' keys begin with the owner, and every statement names it, as a log
-- distributed by owner needs (docs/scale-out.md). That a stream's name is one owner's is the key
-- registries' to keep: every stream's name is made of a key they hold or of its owner, and the
-- commands ask them before they append (ledger.chain_breaks reports a name under two owners). A
-- stream changes owners only when a parked notification is released: ledger.release_parked
-- moves its row first. On a Citus cluster the event is stored on the owner's worker, with that
-- node's transaction id and a position from its range, whichever node runs the command
-- (ledger.event_on_owner_node, ledger.read_horizons); the entry point pushed down runs it on that
-- worker (ledger.execute_user_commands), where the statements are local.
CREATE OR REPLACE FUNCTION ledger.append(p_stream text, p_type text, p_data jsonb, p_occurred_at timestamptz,
                              p_expected_version integer DEFAULT NULL, p_user_id text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_version integer;
    v_prev    bytea;
    v_hash    bytea;
    v_pos     bigint;
    v_owner   text := ledger.event_owner(p_data, p_user_id);
BEGIN
    -- A command function called without its time (the library always gives one: now when a
    -- line has none) would otherwise fail on the stream's hash, a null, naming no field.
    IF p_occurred_at IS NULL THEN
        RAISE EXCEPTION 'the event % of stream % has no time: occurred_at is null', p_type, p_stream
            USING ERRCODE = 'not_null_violation', HINT = 'Give the command its time (p_time).';
    END IF;
    SELECT version, head_hash INTO v_version, v_prev
      FROM ledger.streams WHERE user_id = v_owner AND stream = p_stream FOR UPDATE;
    IF NOT FOUND THEN
        -- A new stream: claim it. A concurrent creator makes this insert wait for its commit and
        -- then do nothing; the stream is then read again, locked, as any other.
        v_hash := ledger.event_hash('\x'::bytea, p_stream, 1, p_type, p_occurred_at, p_data);
        INSERT INTO ledger.streams (stream, version, head_hash, user_id)
        VALUES (p_stream, 1, v_hash, v_owner)
        ON CONFLICT DO NOTHING;
        IF FOUND THEN
            v_version := 0;
            v_prev := '\x'::bytea;
        ELSE
            SELECT version, head_hash INTO STRICT v_version, v_prev
              FROM ledger.streams WHERE user_id = v_owner AND stream = p_stream FOR UPDATE;
        END IF;
    END IF;
    IF p_expected_version IS NOT NULL AND p_expected_version <> v_version THEN
        RAISE EXCEPTION 'stream % is at version %, not the expected %', p_stream, v_version, p_expected_version
            USING ERRCODE = 'serialization_failure';
    END IF;
    IF v_version > 0 THEN
        v_hash := ledger.event_hash(v_prev, p_stream, v_version + 1, p_type, p_occurred_at, p_data);
        UPDATE ledger.streams SET version = v_version + 1, head_hash = v_hash
         WHERE user_id = v_owner AND stream = p_stream;
    END IF;
    INSERT INTO ledger.events (stream, version, type, data, occurred_at, prev_hash, hash, user_id)
    VALUES (p_stream, v_version + 1, p_type, p_data, p_occurred_at, v_prev, v_hash, v_owner)
    RETURNING position INTO v_pos;
    RETURN v_pos;
END
$$;
REVOKE ALL ON FUNCTION ledger.append(text, text, jsonb, timestamptz, integer, text) FROM PUBLIC;
