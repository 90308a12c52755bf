-- Every event names the user it belongs to: ledger.events.user_id, its owner. Every question the
-- ledger answers is about one user, so the owner is what a user's history reads by, and the key
-- by which a distributed log is sharded (docs/scale-out.md). ledger.append and ledger.append_set
-- write it:
--   * the user the event's data names (data->>'userId': payment, lineage, restore, account and
--     release events);
--   * for a store notification, the user it was applied to, or asks the store about
--     (ledger.notification_owner when it was received);
--   * '' for a fact that has no user (yet): a product declaration, a notification parked,
--     ignored or asking about a payment the ledger does not know. No user has that id (a userId
--     has 1 to 128 characters).
-- The owner is not part of the event's hash: it is derived from the event and when it was
-- written, and the chains of events written before it stay valid.
--
-- A stream's owner (ledger.streams.user_id) is its first event's. Every event of a stream has
-- its stream's owner but one kind: a notification parked, then released to its user, is a stream
-- of '' whose NotificationReleased is the user's (the fact moving to its owner).

ALTER TABLE ledger.events ADD COLUMN IF NOT EXISTS user_id text NOT NULL DEFAULT '';
ALTER TABLE ledger.streams ADD COLUMN IF NOT EXISTS user_id text NOT NULL DEFAULT '';
COMMENT ON COLUMN ledger.streams.user_id IS 'The stream''s owner: its first event''s (ledger.events.user_id).';
COMMENT ON COLUMN ledger.events.user_id IS 'The user the event belongs to (ledger.append): the userId its data names, the user a store notification was applied to or asks about, or '''' for a fact with no user (a product, a notification parked, ignored or asking about an unknown payment).';

-- The events written before this column: the same rule, applied once. A notification applied or
-- asking then is given the user ledger.notification_owner names now (as the user's history found
-- it until now), or the user of the payment it carried. The log is append-only (refuse_change.sql),
-- so its trigger is off for this one statement, in this transaction.
DO $backfill$
DECLARE
    v_trigger boolean := EXISTS (SELECT FROM pg_trigger
                                  WHERE tgrelid = 'ledger.events'::regclass AND tgname = 'events_append_only');
    v_owner_fn boolean := to_regprocedure('ledger.notification_owner(jsonb)') IS NOT NULL;
BEGIN
    IF NOT EXISTS (SELECT FROM ledger.events) THEN
        RETURN;
    END IF;
    IF v_trigger THEN
        ALTER TABLE ledger.events DISABLE TRIGGER events_append_only;
    END IF;
    UPDATE ledger.events SET user_id = data->>'userId' WHERE data->>'userId' IS NOT NULL;
    IF v_owner_fn THEN
        EXECUTE $sql$
            UPDATE ledger.events
               SET user_id = coalesce(ledger.notification_owner(data), data->'payment'->>'userId', '')
             WHERE type = 'NotificationReceived' AND data->>'outcome' IN ('applied', 'asked')
        $sql$;
    ELSE
        UPDATE ledger.events SET user_id = coalesce(data->'payment'->>'userId', '')
         WHERE type = 'NotificationReceived' AND data->>'outcome' IN ('applied', 'asked');
    END IF;
    IF v_trigger THEN
        ALTER TABLE ledger.events ENABLE ALWAYS TRIGGER events_append_only;
    END IF;
    UPDATE ledger.streams s SET user_id = e.user_id
      FROM ledger.events e
     WHERE e.stream = s.stream AND e.version = 1 AND e.user_id <> '';
END
$backfill$;

-- A user's events (ledger.user_history). It takes the place of the index on
-- data->>'userId' (0009_history_indexes.sql), which found the same events but the notifications.
-- Facts without a user are not in it.
CREATE INDEX IF NOT EXISTS events_owner_idx ON ledger.events (user_id) WHERE user_id <> '';
DROP INDEX IF EXISTS ledger.events_user_idx;

-- ledger.append takes the owner of a store notification (ledger.notify): the definition with
-- that argument replaces this one.
DROP FUNCTION IF EXISTS ledger.append(text, text, jsonb, timestamptz, integer);
