-- On a Citus cluster every event is appended through the coordinator: ledger.append and
-- ledger.append_set refuse one that a command run on a worker would append, whose transaction id
-- is the worker's and whose position is from the worker's range, at 2^48 and above
-- (ledger.appended_through_the_coordinator says why). A ledger that already holds such an event
-- does not upgrade: the readers cannot order it, and its operator has to know.
DO $check$
DECLARE
    v_found bigint;
BEGIN
    SELECT count(*) INTO v_found FROM ledger.events WHERE position >= 281474976710656;
    IF v_found > 0 THEN
        RAISE EXCEPTION 'ledger.events holds % event(s) appended on a Citus worker (positions from 2^48, the first %): the readers cannot order them among the coordinator''s (docs/scale-out.md, "Commands run through the coordinator")',
            v_found, (SELECT min(position) FROM ledger.events WHERE position >= 281474976710656);
    END IF;
END
$check$;
