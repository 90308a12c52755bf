-- ledger_store: the role of the process that verifies the stores' signatures (`ledger serve`, an
-- ingest of notification files). Only it may execute ledger.notify, which takes a store
-- notification's facts as the library decoded them: a refund undone, a payment with no purchase
-- token, an expiry extended, a billing state. The function cannot check a signature itself, so
-- the facts only a verified store message may establish are kept from ledger_writer, whose
-- logins are the backends': with it, a writer login could undo a refund and then consume the payment.
--
-- ledger_store is a member of ledger_writer: the process that takes notifications also runs the
-- lines that teach the ledger (accounts, products) and the commands of its batches. Roles are
-- cluster-wide, so several databases may race to create it: losing that race is fine.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ledger_store') THEN
        BEGIN
            CREATE ROLE ledger_store NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END IF;
    IF NOT pg_has_role('ledger_store', 'ledger_writer', 'MEMBER') THEN
        GRANT ledger_writer TO ledger_store;
    END IF;
END
$roles$;
GRANT USAGE ON SCHEMA ledger TO ledger_store;
