-- Consumes a set of payments, set-based: the one definition of the consume rules (docs/contract.md
-- §2.2), for a single consume (a set of one: ledger.consume) as for the library's batches
-- (consume_batch). Item i consumes p_seqs[i] (a payment's name, or another name of it: an alias)
-- for user p_users[i], showing the token digest p_tokens[i] (null: none, for a payment learned
-- from a store notification), at p_times[i]. Returns one result per item, in input order. Each
-- item is atomic on its own: a refused item writes nothing and the others apply.
--
-- How: each item's name is resolved to its payment (the payment of that name, else the one the
-- name is an alias of), and the payments' rows are locked at once, in payment_seq order, so
-- concurrent consumes of one payment queue (the first wins) and two sets never wait for each
-- other in a cycle. Then rounds: round r holds each payment's r-th item in input order, so two
-- items naming one payment, under one name or two, behave as if run one after the other, and
-- the items of a round name different payments. Per round, one statement decides every item's
-- outcome from the payments as the earlier rounds left them; one statement appends the accepted
-- events (hash chain included); project_positions applies exactly those events.
CREATE OR REPLACE FUNCTION ledger.apply_consumes(p_seqs text[], p_users text[], p_tokens bytea[], p_times timestamptz[])
RETURNS SETOF ledger.command_result
-- Generic plans and no sequential scans, as ledger.apply_payments (and why): every statement is
-- driven by the set's arrays and index probes, for a set of one and of a thousand alike.
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_count     integer := coalesce(cardinality(p_seqs), 0);
    v_payments  text[];      -- each item's payment (null: none by that name)
    v_rounds    integer[];   -- each item's round: 1 + the earlier items of its payment
    v_ords      integer[] := '{}';                      -- the items decided so far, by round
    v_outcomes  ledger.command_result[] := '{}';        -- and their outcomes
    r_ords      integer[];
    r_outcomes  ledger.command_result[];
    a_streams   text[];
    a_data      jsonb[];
    a_times     timestamptz[];
    v_positions bigint[];
BEGIN
    IF v_count = 0 THEN
        RETURN;
    END IF;
    -- The payment of that name, else the one the name is another name of (ledger.payment_named).
    v_payments := ARRAY(
        SELECT coalesce((SELECT p.payment_seq FROM ledger.payments p WHERE p.payment_seq = i.seq),
                        (SELECT a.payment_seq FROM ledger.payment_aliases a WHERE a.alias_seq = i.seq))
          FROM unnest(p_seqs) WITH ORDINALITY AS i(seq, n) ORDER BY n);
    PERFORM FROM ledger.payments WHERE payment_seq = ANY (v_payments) ORDER BY payment_seq FOR UPDATE;
    -- (IF, not CASE: a CASE would still start the executor of the set statement for a set of
    -- one, and starting it costs more than running it on one item.)
    IF v_count = 1 THEN
        v_rounds := ARRAY[1];
    ELSE
        v_rounds := ARRAY(
            SELECT CASE WHEN seq IS NULL THEN 1 ELSE row_number() OVER (PARTITION BY seq ORDER BY n) END
              FROM unnest(v_payments) WITH ORDINALITY AS i(seq, n) ORDER BY n);
    END IF;

    FOR v_round IN 1 .. (SELECT max(r) FROM unnest(v_rounds) AS r) LOOP
        -- Every item's outcome, in the contract's order of checks, from the payment's row as it
        -- stands now (locked, and changed by the earlier rounds' consumes).
        WITH decided AS (
            SELECT i.n, i.at, p.payment_seq AS seq, i.usr,
                   CASE
                   WHEN p.payment_seq IS NULL THEN
                        ledger.rejected('NOT_FOUND', format('no payment %s', i.name), i.name)
                   WHEN p.user_id IS DISTINCT FROM i.usr THEN
                        ledger.rejected('USER_INVALID', format('payment %s belongs to another user', i.name), i.name)
                   WHEN NOT (ledger.digest_equal(p.token, i.token) OR (p.token IS NULL AND i.token IS NULL)) THEN
                        ledger.rejected('TOKEN_INVALID',
                            CASE WHEN p.token IS NULL
                                 THEN format('payment %s was learned from the store and has no purchase token: consume it without one', i.name)
                                 ELSE format('the purchase token does not match payment %s', i.name) END, i.name)
                   WHEN p.product_type = 'AUTO_RENEWABLE' THEN ledger.rejected('NOT_CONSUMABLE',
                        format('payment %s is an AUTO_RENEWABLE subscription, which is not consumed', i.name), i.name)
                   WHEN p.consumed_at IS NOT NULL THEN
                        ROW('alreadyConsumed', NULL, NULL, i.name, p.consumed_at, NULL, NULL)::ledger.command_result
                   WHEN p.refunded_at IS NOT NULL THEN ledger.rejected('REFUNDED',
                        format('payment %s was refunded at %s and was never consumed', i.name,
                               to_char(p.refunded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), i.name)
                   ELSE ROW('consumed', NULL, NULL, i.name, i.at, NULL, NULL)::ledger.command_result
                   END AS outcome
              FROM unnest(p_seqs, p_users, p_tokens, p_times, v_payments, v_rounds) WITH ORDINALITY
                   AS i(name, usr, token, at, payment, round, n)
              LEFT JOIN LATERAL (
                    SELECT payment_seq, user_id, coalesce(token_sha256, linked_token_sha256) AS token, product_type,
                           consumed_at, refunded_at
                      FROM ledger.payments WHERE payment_seq = i.payment) p ON true
             WHERE i.round = v_round
        )
        SELECT array_agg(n ORDER BY n), array_agg(outcome ORDER BY n),
               array_agg('payment:' || seq ORDER BY n) FILTER (WHERE (outcome).status = 'consumed'),
               array_agg(jsonb_build_object('paymentSeq', seq, 'userId', usr) ORDER BY n) FILTER (WHERE (outcome).status = 'consumed'),
               array_agg(at ORDER BY n) FILTER (WHERE (outcome).status = 'consumed')
          INTO r_ords, r_outcomes, a_streams, a_data, a_times
          FROM decided;
        v_ords := v_ords || r_ords;
        v_outcomes := v_outcomes || r_outcomes;
        CONTINUE WHEN a_streams IS NULL;

        -- The consumes, appended in input order, each chained to its payment stream's head (a
        -- round names each payment once). The heads are locked first: a refund or a link of
        -- another name may append to the same stream.
        v_positions := ledger.append_set(a_streams, array_fill('PaymentConsumed'::text, ARRAY[cardinality(a_streams)]),
                                         a_data, a_times, true);
        PERFORM ledger.project_positions(v_positions);
    END LOOP;
    -- In input order (an assignment per item into an array of results costs more than this sort).
    RETURN QUERY SELECT status, code, message, payment_seq, consumed_at, recorded, payments
                   FROM unnest(v_ords, v_outcomes) AS x(n, status, code, message, payment_seq, consumed_at, recorded, payments)
                  ORDER BY n;
END
$$;
REVOKE ALL ON FUNCTION ledger.apply_consumes(text[], text[], bytea[], timestamptz[]) FROM PUBLIC;
