-- The ledger's calls to the stores (CONTRACT.md §6.2): each is a row here, written in the same
-- transaction as the event that needs it, run after that commit by `ledger serve` or `ledger jobs
-- run`, retried until it succeeds or fails for good. A job's effect commits in the transaction
-- that marks it done (ledger.finish_job), so a runner that dies between the store's answer and
-- its commit leaves the job pending, and the next runner's effect is the only one.
--
-- Jobs are operational state, not facts: the log says what the ledger learned (the store's
-- answer is kept in the event that a job's effect appends), this table says what is still to ask.
CREATE TABLE ledger.jobs (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- google.subscription | google.product | google.acknowledge | apple.consumption
    kind            text NOT NULL,
    -- One job per purpose (a notification, a token to acknowledge): replays add none.
    purpose         text NOT NULL UNIQUE,
    -- What the call needs, without secrets: package name, product, notification id and time.
    args            jsonb NOT NULL,
    -- Google's purchase token, which its API needs in the URL. The one place the ledger keeps a
    -- token itself (the log and projections keep only its SHA-256), for as long as the job may
    -- still run: cleared when the job is done; no reader role may select it.
    secret          text,
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    run_after       timestamptz NOT NULL DEFAULT now(),
    -- A runner's claim: no other runner takes the job before this instant (a runner that dies
    -- loses it when it passes).
    leased_until    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- The first failed attempt: three days of failures fail the job for good.
    failing_since   timestamptz,
    finished_at     timestamptz,
    -- The last failure: the store's HTTP status and own error code, and what happened.
    last_status     integer,
    last_code       text,
    last_error      text,
    -- The result of the effect (recorded, duplicate, parked...) and its payment.
    outcome         text,
    payment_seq     text,
    -- The event whose commit wrote the job.
    caused_by       bigint
);
CREATE INDEX jobs_due_idx ON ledger.jobs (run_after, id) WHERE state = 'pending';
CREATE INDEX jobs_failed_idx ON ledger.jobs (id) WHERE state = 'failed';

REVOKE ALL ON ledger.jobs FROM PUBLIC;
GRANT SELECT (id, kind, purpose, args, state, attempts, run_after, leased_until, created_at, failing_since,
              finished_at, last_status, last_code, last_error, outcome, payment_seq, caused_by)
   ON ledger.jobs TO ledger_reader;
