-- The event log: every fact the ledger accepted, immutable, in streams with versions,
-- each event hash-chained to the one before it in its stream.

CREATE SCHEMA IF NOT EXISTS ledger;
COMMENT ON SCHEMA ledger IS 'PurchaseLedger: the event log (ledger.events) and the projections the queries read.';

-- Roles for operators to grant (they cannot log in). Roles are cluster-wide, so several
-- databases may race to create them: losing that race is fine.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ledger_writer') THEN
        BEGIN
            CREATE ROLE ledger_writer NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ledger_reader') THEN
        BEGIN
            CREATE ROLE ledger_reader NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END IF;
END
$roles$;

GRANT USAGE ON SCHEMA ledger TO ledger_writer, ledger_reader;

-- One row per stream: its current version and the hash of its last event. Appends lock the
-- row, so the writers of one stream are serialised and the writers of different streams are not.
CREATE TABLE ledger.streams (
    stream    text PRIMARY KEY,
    version   integer NOT NULL CHECK (version > 0),
    head_hash bytea NOT NULL
);
COMMENT ON TABLE ledger.streams IS 'Each stream''s current version and the hash of its newest event.';

CREATE TABLE ledger.events (
    position    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream      text NOT NULL,
    version     integer NOT NULL CHECK (version > 0),
    type        text NOT NULL,
    data        jsonb NOT NULL,
    occurred_at timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    tx          xid8 NOT NULL DEFAULT pg_current_xact_id(),
    prev_hash   bytea NOT NULL,
    hash        bytea NOT NULL,
    CONSTRAINT events_stream_version_key UNIQUE (stream, version)
);
COMMENT ON TABLE ledger.events IS 'Append-only event log. position: global order of appends; tx: the appending transaction, for gap-free catch-up reads ((tx, position) order below pg_snapshot_xmin).';
COMMENT ON COLUMN ledger.events.data IS 'The event as JSON. A payload that jsonb cannot hold (it contains U+0000) is stored as "payloadBase64" (standard base64 of its UTF-8 bytes) instead of "payload".';
COMMENT ON COLUMN ledger.events.hash IS 'sha256(prev_hash || canonical text of the event), see ledger.event_hash; prev_hash of a stream''s first event is empty.';

-- A catch-up reader asks for (tx, position) > its last one and tx < pg_snapshot_xmin(pg_current_snapshot()).
CREATE INDEX events_tx_position_idx ON ledger.events (tx, position);

-- The canonical text of an event that its hash covers: stream, version, type, time in
-- microseconds since the epoch and the jsonb text of its data, one per line.
CREATE FUNCTION ledger.event_hash(prev bytea, stream text, version integer, type text,
                                  occurred_at timestamptz, data jsonb)
RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN sha256(prev || convert_to(
    stream || E'\n' || version::text || E'\n' || type || E'\n'
    || (extract(epoch FROM occurred_at) * 1000000)::bigint::text || E'\n' || data::text, 'UTF8'));

-- Append-only, whoever asks: UPDATE, DELETE and TRUNCATE fail.
CREATE FUNCTION ledger.refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger.events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Record a new event (a refund, a cancel) instead of changing history.';
END
$$;

CREATE TRIGGER events_append_only
    BEFORE UPDATE OR DELETE ON ledger.events
    FOR EACH ROW EXECUTE FUNCTION ledger.refuse_change();
CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON ledger.events
    FOR EACH STATEMENT EXECUTE FUNCTION ledger.refuse_change();

-- Appends one event to a stream and returns its position. p_expected_version, when not null,
-- is the version the caller last saw (0: the stream must not exist yet); a mismatch raises
-- SQLSTATE 40001 so that the caller can re-read and retry (optimistic concurrency).
-- The stream's row lock serialises the writers of one stream, and only them.
CREATE FUNCTION ledger.append(p_stream text, p_type text, p_data jsonb, p_occurred_at timestamptz,
                              p_expected_version integer DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_version integer;
    v_prev    bytea;
    v_hash    bytea;
    v_pos     bigint;
BEGIN
    SELECT version, head_hash INTO v_version, v_prev
      FROM ledger.streams WHERE stream = p_stream FOR UPDATE;
    IF NOT FOUND THEN
        -- A new stream: claim it. A concurrent creator makes this insert wait for its commit and
        -- then do nothing; the stream is then read again, locked, as any other.
        v_hash := ledger.event_hash('\x'::bytea, p_stream, 1, p_type, p_occurred_at, p_data);
        INSERT INTO ledger.streams (stream, version, head_hash) VALUES (p_stream, 1, v_hash)
        ON CONFLICT (stream) DO NOTHING;
        IF FOUND THEN
            v_version := 0;
            v_prev := '\x'::bytea;
        ELSE
            SELECT version, head_hash INTO v_version, v_prev
              FROM ledger.streams WHERE stream = p_stream FOR UPDATE;
        END IF;
    END IF;
    IF p_expected_version IS NOT NULL AND p_expected_version <> v_version THEN
        RAISE EXCEPTION 'stream % is at version %, not the expected %', p_stream, v_version, p_expected_version
            USING ERRCODE = 'serialization_failure';
    END IF;
    IF v_version > 0 THEN
        v_hash := ledger.event_hash(v_prev, p_stream, v_version + 1, p_type, p_occurred_at, p_data);
        UPDATE ledger.streams SET version = v_version + 1, head_hash = v_hash WHERE stream = p_stream;
    END IF;
    INSERT INTO ledger.events (stream, version, type, data, occurred_at, prev_hash, hash)
    VALUES (p_stream, v_version + 1, p_type, p_data, p_occurred_at, v_prev, v_hash)
    RETURNING position INTO v_pos;
    RETURN v_pos;
END
$$;

REVOKE ALL ON ledger.events, ledger.streams FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.append(text, text, jsonb, timestamptz, integer) FROM PUBLIC;
