-- What the ledger keeps and never derives: the event log, its streams, the command result
-- type, the roles and the schemas. Versioned and append-only: a released migration is never
-- edited (its checksum is recorded); a change is a new migration.
--
-- Everything else is derived and lives in Schema/definitions/: every function and view, one
-- file each, re-applied by `ledger migrate` whenever a definition changes; the projection
-- tables, which ledger.install_projections creates and a rebuild replaces from the log.
--
-- Databases made by the ledger's first migrations (0001_event_log.sql … 0009, which held
-- functions too) are adopted by the migrator: their log is this one, their functions are
-- replaced by the definitions and their projections rebuilt. That is why every statement here
-- may run again on a database that has its objects already.

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
CREATE TABLE IF NOT EXISTS ledger.streams (
    stream    text PRIMARY KEY,
    version   integer NOT NULL CHECK (version > 0),
    head_hash bytea NOT NULL
);
COMMENT ON TABLE ledger.streams IS 'Each stream''s current version and the hash of its newest event.';

CREATE TABLE IF NOT EXISTS ledger.events (
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
CREATE INDEX IF NOT EXISTS events_tx_position_idx ON ledger.events (tx, position);

REVOKE ALL ON ledger.events, ledger.streams FROM PUBLIC;

-- What every command function returns: one row, read by the library as the command's outcome.
DO $type$
BEGIN
    CREATE TYPE ledger.command_result AS (
        status      text,        -- recorded | duplicate | consumed | alreadyConsumed | restored | rejected | ...
        code        text,        -- the contract's error code when rejected
        message     text,
        payment_seq text,
        consumed_at timestamptz,
        recorded    text[],
        payments    text[]
    );
EXCEPTION WHEN duplicate_object THEN NULL;
END
$type$;

CREATE SCHEMA IF NOT EXISTS analytics;
COMMENT ON SCHEMA analytics IS 'PurchaseLedger analytics: documented, stable views (and the functions behind them) over the projections in schema ledger. UTC days; sandbox payments left out; money per currency, never converted.';
GRANT USAGE ON SCHEMA analytics TO ledger_reader;
