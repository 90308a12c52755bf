-- The log's and the streams' keys begin with their owner: ledger.events (user_id, position) and
-- (user_id, stream, version), ledger.streams (user_id, stream). A distributed table's unique keys
-- must hold its distribution column (docs/scale-out.md), and every statement of the appends
-- already names the owner.
--
-- What the keys without the owner also kept, that a stream's name is one owner's, the key
-- registries keep: every stream's name is made of a key they hold or of its owner, and every
-- command asks a key's registry for its owner before it appends. ledger.chain_breaks reports a
-- name with heads under two owners ('forked'), which only an append past the commands can make.
--
-- A lookup by position alone (a command's projection, a replay's range, the jobs' and the
-- webhooks' causes) keeps an index of its own, not unique. The index on the owner alone
-- (events_owner_idx) is the primary key's first column now, and goes.
--
-- On a live log the three keys are rebuilt in the migration's transaction, the appends waiting
-- (BENCHMARKS.md, "The log's keys begin with the owner", has the time for a million events).
DO $keys$
DECLARE
    v_streams text := (SELECT pg_get_constraintdef(oid) FROM pg_constraint
                        WHERE conrelid = 'ledger.streams'::regclass AND conname = 'streams_pkey');
    v_events  text := (SELECT pg_get_constraintdef(oid) FROM pg_constraint
                        WHERE conrelid = 'ledger.events'::regclass AND conname = 'events_pkey');
BEGIN
    IF v_streams = 'PRIMARY KEY (stream)' THEN
        ALTER TABLE ledger.streams
            DROP CONSTRAINT streams_pkey,
            ADD CONSTRAINT streams_pkey PRIMARY KEY (user_id, stream);
    END IF;
    IF v_events = 'PRIMARY KEY ("position")' THEN
        ALTER TABLE ledger.events
            DROP CONSTRAINT events_pkey,
            DROP CONSTRAINT events_stream_version_key,
            ADD CONSTRAINT events_pkey PRIMARY KEY (user_id, position),
            ADD CONSTRAINT events_stream_version_key UNIQUE (user_id, stream, version);
    END IF;
END
$keys$;

CREATE INDEX IF NOT EXISTS events_position_idx ON ledger.events (position);
DROP INDEX IF EXISTS ledger.events_owner_idx;

COMMENT ON TABLE ledger.streams IS 'Each stream''s current version and the hash of its newest event, under its owner (user_id).';
