-- A stream's owner (ledger.streams.user_id) is its head's: the owner of its latest event. A
-- stream changes owners only when a parked notification is released to its user: its row moves
-- from '' to the user before the NotificationReleased is appended (ledger.release_parked), and
-- ledger.append writes only to a stream of the event's own owner. So every statement on a stream
-- names its owner, as a log distributed by owner needs (docs/scale-out.md).
--
-- The streams released before this rule keep the owner of their first event (''): they move to
-- their head's owner here, once. Only an ownerless notification's stream can have moved.

COMMENT ON COLUMN ledger.streams.user_id IS 'The stream''s owner: its latest event''s (ledger.events.user_id).';

UPDATE ledger.streams s SET user_id = e.user_id
  FROM ledger.events e
 WHERE s.user_id = '' AND s.stream LIKE 'notification:%'
   AND e.stream = s.stream AND e.version = s.version AND e.user_id <> '';
