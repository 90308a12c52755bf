-- Where each table of the ledger lives on a Citus cluster (docs/scale-out.md): the one list that
-- ledger.distribute places from, and that the checks hold the schema's keys to.
--   reference  a catalog, small and read by every node: a copy on each.
--   owner      a user's facts, distributed by user_id and colocated with the log, so that the
--              statements of a command, which all name the owner, go to one worker. Every unique
--              key of such a table includes user_id.
--   key        a key registry, and the account links, each distributed by its own key: a key
--              unique across users is claimed and asked where its hash lives. So are the
--              keys' locks (ledger.key_locks), each taken where its key's hash lives.
--   coordinator  on the coordinator, one copy, added to Citus's metadata (a Citus local table)
--              so that a command run on a worker writes its rows there in its transaction: the
--              jobs, which commands add and release, and one runner claims in order.
-- ledger.distribute places them all when `ledger migrate` runs on a Citus coordinator with
-- workers. The tables not listed stay on the coordinator outside the metadata: the webhooks'
-- tables (written by the dispatcher and the runner there), the migrations' records, the
-- projection's per-transaction scratch tables (one set on each node).
CREATE OR REPLACE FUNCTION ledger.distribution_plan()
RETURNS TABLE (table_name text, placement text, column_name text)
LANGUAGE sql IMMUTABLE AS $$
VALUES ('ledger.field_rules', 'reference', NULL),
       ('ledger.api_keys', 'reference', NULL),
       ('ledger.products', 'reference', NULL),
       ('ledger.events', 'owner', 'user_id'),
       ('ledger.streams', 'owner', 'user_id'),
       ('ledger.payments', 'owner', 'user_id'),
       ('ledger.payment_aliases', 'owner', 'user_id'),
       ('ledger.lineages', 'owner', 'user_id'),
       ('ledger.auto_renew_changes', 'owner', 'user_id'),
       ('ledger.billing_states', 'owner', 'user_id'),
       ('ledger.entitled_spans', 'owner', 'user_id'),
       ('ledger.lineage_states', 'owner', 'user_id'),
       ('ledger.restores', 'owner', 'user_id'),
       ('ledger.notifications', 'owner', 'user_id'),
       ('ledger.payment_keys', 'key', 'payment_seq'),
       ('ledger.transaction_keys', 'key', 'transaction_id'),
       ('ledger.lineage_keys', 'key', 'lineage_id'),
       ('ledger.token_keys', 'key', 'token_sha256'),
       ('ledger.notification_keys', 'key', 'notification_id'),
       ('ledger.account_links', 'key', 'app_account_token'),
       ('ledger.key_locks', 'key', 'key'),
       ('ledger.jobs', 'coordinator', NULL)
$$;
REVOKE ALL ON FUNCTION ledger.distribution_plan() FROM PUBLIC;
