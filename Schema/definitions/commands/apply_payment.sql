-- Records one purchase or renewal (p_kind 'purchase' | 'renewal'; d: the payment command, as an
-- item of ledger.apply_payments reads it; p_job: the job it brings, or null; p_from_store: it
-- comes from a verified store notification): the same rules as a set, without the set's
-- machinery. A set of one costs about three times what its payment does (its statement's plan
-- is started for rounds, lineages defined within the round and arrays, none of which one
-- payment needs; BENCHMARKS.md), and a backend recording one purchase at a time pays it on
-- every call. The rules are the set's own: ledger.payment_refused_field, ledger.payment_found,
-- ledger.payment_outcome; the event goes through ledger.append and ledger.project_positions.
CREATE OR REPLACE FUNCTION ledger.apply_payment(p_kind text, d jsonb, p_from_store boolean, p_job jsonb)
RETURNS ledger.command_result
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_lineage text := ledger.payment_lineage_id(d);
    p         record;
    l         record;
    o         record;
    v_pos     bigint;
BEGIN
    PERFORM ledger.lock_keys(ledger.payment_lock_keys(d));
    -- The payment it meets and, for a payment not recorded yet, the lineage it would join (each
    -- a plain call, evaluated without a statement of its own); then one statement: the rules and
    -- the outcome. A refused payment's lookups are not used.
    p := ledger.payment_found(d->>'paymentSeq', d->>'storeCode', d->>'transactionId');
    l := ledger.lineage_found(d->>'storeCode', CASE WHEN p.payment_seq IS NULL THEN v_lineage END);
    SELECT x.* INTO o
      FROM ledger.payment_refused_field(p_kind, d, p_from_store, ledger.payment_rules()) AS f
     CROSS JOIN LATERAL ledger.payment_outcome(
                p_kind, d, p_from_store, f.field,
                p.payment_seq IS NOT NULL, p.payment_seq, p.user_id, p.product_id, p.price, p.token_sha256,
                p.linked_token_sha256,
                l.user_id IS NOT NULL, l.user_id, l.product_id, l.product_type) AS x;
    IF o.stream IS NULL THEN
        RETURN o.outcome;
    END IF;
    -- Where commands run on the workers, what a replay cannot tell from positions is said by the
    -- event: that its Google token is another payment's already (ledger.payment_token_claim), and
    -- that its subscription joins a lineage another payment began ("lineageClaimed": false,
    -- found above: the lineage that payment_outcome joins). A lineage's first payment is the one
    -- the live path recorded first, which on a cluster may hold the higher position: a user's
    -- shards moved by the rebalancer to a worker whose range is below the old one's append the
    -- user's renewals below the purchase (docs/scale-out.md, "A decision the replay cannot remake
    -- across nodes").
    IF ledger.commands_on_workers() THEN
        IF o.data ? 'purchaseTokenSha256' THEN
            o.data := ledger.payment_token_claim(o.type, o.data);
        END IF;
        IF l.user_id IS NOT NULL AND o.type IN ('PurchaseRecorded', 'RenewalRecorded') THEN
            o.data := o.data || '{"lineageClaimed": false}';
        END IF;
    END IF;
    v_pos := ledger.append(o.stream, o.type, o.data, o.at);
    PERFORM ledger.project_positions(ARRAY[v_pos], ledger.event_owner(o.data, NULL));
    IF o.type <> 'PaymentLinked' THEN
        -- Its job (reading the purchase to acknowledge it), caused by its event; its purchase
        -- token is kept in the job only. A duplicate brings none: the first record's job stands.
        IF p_job IS NOT NULL THEN
            PERFORM ledger.add_job(p_job - 'secret', p_job->>'secret', v_pos);
        END IF;
        -- A new payment releases the parked notifications that were waiting for it.
        IF EXISTS (SELECT FROM ledger.notifications WHERE user_id = '' AND parked) THEN
            PERFORM ledger.release_parked_by_payment(o.data);
        END IF;
    END IF;
    RETURN o.outcome;
END
$$;
REVOKE ALL ON FUNCTION ledger.apply_payment(text, jsonb, boolean, jsonb) FROM PUBLIC;
