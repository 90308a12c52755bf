-- Makes the first waiting job of queue p_queue pending when none of the queue is pending (the
-- head is done or failed for good). Every writer of a queue's states takes the queue's advisory
-- lock first, so a head that finishes while a new job joins its queue never leaves the new one
-- waiting: whichever commits second sees the other. Returns whether a job was made pending.
CREATE OR REPLACE FUNCTION ledger.promote_queue(p_queue text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_queue, 7031));
    UPDATE ledger.jobs
       SET state = 'pending', run_after = now()
     WHERE id = (SELECT w.id FROM ledger.jobs w
                  WHERE w.queue = p_queue AND w.state = 'waiting'
                  ORDER BY w.queue_position, w.id
                  LIMIT 1)
       AND NOT EXISTS (SELECT FROM ledger.jobs p WHERE p.queue = p_queue AND p.state = 'pending');
    RETURN FOUND;
END
$$;
REVOKE ALL ON FUNCTION ledger.promote_queue(text) FROM PUBLIC;
