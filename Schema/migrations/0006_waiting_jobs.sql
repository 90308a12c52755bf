-- A job that waits for a fact the ledger does not hold yet. Google's answer about a purchase whose
-- owner is unknown (its notification parked, CONTRACT.md §6.3) may say the purchase is not
-- acknowledged; the acknowledgement must wait until the payment is recorded: acknowledging a
-- purchase nobody owns would stop Google's automatic refund of goods nobody received. Such a job
-- is `waiting` (args.waitsFor: the parked notification's id) until ledger.release_parked applies
-- that notification: then `pending` when its payment is recorded, `failed` when it was refused.
-- (Kinds since 0005: google.check, the read of a payment an SDK line reported.)
ALTER TABLE ledger.jobs DROP CONSTRAINT jobs_state_check;
ALTER TABLE ledger.jobs ADD CONSTRAINT jobs_state_check CHECK (state IN ('pending', 'waiting', 'done', 'failed'));
CREATE INDEX jobs_waiting_idx ON ledger.jobs ((args->>'waitsFor')) WHERE state = 'waiting';
