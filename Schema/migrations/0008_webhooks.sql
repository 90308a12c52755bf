-- Webhooks out (README, "Webhooks"): each endpoint follows the log with the gap-free catch-up
-- reader from its own checkpoint; every event it has not seen, and every change of a
-- subscription's entitlement (at an event, or at an instant passing with no event), becomes a
-- delivery job in ledger.jobs, written in the transaction that moves the checkpoint, so a crash
-- neither loses nor doubles one. Deliveries are jobs like the calls to the stores (one job
-- mechanism: claimed, leased, retried with backoff for three days, then kept as failed).
CREATE TABLE ledger.webhook_endpoints (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url                 text NOT NULL,
    -- The event types it receives (null: every one).
    event_types         text[],
    -- The HMAC-SHA256 key its deliveries are signed with: kept so that the ledger can sign,
    -- printed once by `ledger webhooks add`, never logged; no reader role may select it.
    secret              text NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    removed_at          timestamptz,
    -- The catch-up reader's place: the last event turned into deliveries.
    checkpoint_tx       xid8 NOT NULL DEFAULT '0',
    checkpoint_position bigint NOT NULL DEFAULT 0,
    -- Entitlements that ended with no event are looked for up to this instant.
    clock_until         timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON ledger.webhook_endpoints FROM PUBLIC;
GRANT SELECT (id, url, event_types, created_at, removed_at, checkpoint_position, clock_until)
   ON ledger.webhook_endpoints TO ledger_reader;
GRANT SELECT (id, removed_at) ON ledger.webhook_endpoints TO ledger_store;

-- What each endpoint was last told of each subscription lineage: entitled or not. A change
-- is a delivery (SubscriptionEntitled, SubscriptionNotEntitled) and a new row here, in one
-- transaction.
CREATE TABLE ledger.webhook_entitlements (
    endpoint_id bigint NOT NULL REFERENCES ledger.webhook_endpoints (id) ON DELETE CASCADE,
    store_code  text NOT NULL,
    lineage_id  text NOT NULL,
    entitled    boolean NOT NULL,
    PRIMARY KEY (endpoint_id, store_code, lineage_id)
);
REVOKE ALL ON ledger.webhook_entitlements FROM PUBLIC;

-- Jobs that must run one after another: a queue's jobs run in (queue_position, id) order, one
-- at a time. Only its head is pending; the rest wait (state 'waiting') until the head is done
-- or has failed for good (ledger.promote_queue). A webhook delivery's queue is its endpoint and
-- user, so a failing delivery holds back that user's later ones for that endpoint only.
ALTER TABLE ledger.jobs ADD COLUMN queue text, ADD COLUMN queue_position bigint;
CREATE INDEX jobs_queue_idx ON ledger.jobs (queue, queue_position, id)
    WHERE queue IS NOT NULL AND state IN ('pending', 'waiting');
GRANT SELECT (queue, queue_position) ON ledger.jobs TO ledger_reader;

-- `ledger serve` follows the log for webhooks and the event feed (GET /v1/events): its login,
-- ledger_store, reads the events (and still cannot write them).
GRANT SELECT ON ledger.events TO ledger_store;
