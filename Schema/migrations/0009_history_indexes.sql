-- What a user's history (ledger.user_history: GET /v1/users/{userId}/history, `ledger history`)
-- reads by index.
--
-- The events whose data names a user: every payment event, lineage events, restores, account
-- links and notification releases. The projections do not find them all: ledger.payments has
-- no index by user but the unconsumed one (a consumed or refunded payment is not in it), and
-- ledger.account_links none at all. Events without a user (notifications, product
-- declarations) are left out. Every append of an event with a user inserts one entry here.
CREATE INDEX events_user_idx ON ledger.events ((data->>'userId')) WHERE (data->>'userId') IS NOT NULL;

-- The jobs an event caused (a notification's store call), for the history's rows.
CREATE INDEX jobs_caused_by_idx ON ledger.jobs (caused_by) WHERE caused_by IS NOT NULL;
