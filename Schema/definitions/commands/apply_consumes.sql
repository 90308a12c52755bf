-- Consumes a set of payments, set-based (docs/contract.md §2.2): the library's batches
-- (consume_batch, consume_set). A set of one is that consume alone (ledger.apply_consume). Both
-- apply the one definition of the consume rules, ledger.consume_outcome, to the payment each
-- name stands for (ledger.payment_resolved, for a set at once).
-- Item i consumes p_seqs[i] (a payment's name, or another name of it: an alias) for user
-- p_users[i], showing the token digest p_tokens[i] (null: none, for a payment learned from a
-- store notification), at p_times[i]. Returns one result per item, in input order. Each
-- item is atomic on its own: a refused item writes nothing and the others apply.
--
-- How: each item's name is resolved to its payment and its owner, as the payments' registry
-- names them (a payment's name names itself, an alias its payment), and the payments' rows are
-- locked at once, in payment_seq order, so
-- concurrent consumes of one payment queue (the first wins) and two sets never wait for each
-- other in a cycle. Then rounds: round r holds each payment's r-th item in input order, so two
-- items naming one payment, under one name or two, behave as if run one after the other, and
-- the items of a round name different payments. Per round, one statement decides every item's
-- outcome from the payments as the earlier rounds left them (ledger.consume_outcome); one
-- statement appends the accepted events (hash chain included); project_positions applies
-- exactly those events.
CREATE OR REPLACE FUNCTION ledger.apply_consumes(p_seqs text[], p_users text[], p_tokens bytea[], p_times timestamptz[])
RETURNS SETOF ledger.command_result
-- Generic plans and no sequential scans, as ledger.apply_payments (and why): every statement is
-- driven by the set's arrays and index probes, for a set of one and of a thousand alike.
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_count     integer := coalesce(cardinality(p_seqs), 0);
    v_payments  text[];      -- each item's payment (null: none by that name)
    v_owners    text[];      -- and its owner
    v_rounds    integer[];   -- each item's round: 1 + the earlier items of its payment
    v_ords      integer[] := '{}';                      -- the items decided so far, by round
    v_outcomes  ledger.command_result[] := '{}';        -- and their outcomes
    r_ords      integer[];
    r_outcomes  ledger.command_result[];
    a_streams   text[];
    a_data      jsonb[];
    a_times     timestamptz[];
    v_positions bigint[];
    held        record;
BEGIN
    IF v_count = 0 THEN
        RETURN;
    ELSIF v_count = 1 THEN
        -- A consume alone takes the path without the set's machinery (same rules).
        RETURN NEXT ledger.apply_consume(p_seqs[1], p_users[1], p_tokens[1], p_times[1]);
        RETURN;
    END IF;
    -- The writers' gate first (ledger.writers_gate), as every command takes it.
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    -- On a Citus cluster (a distributed log), the items one at a time, in input order, each as a
    -- consume alone, for the reason ledger.apply_payments gives; first the payments they name are
    -- locked, as below and in the same order, each on its owner's shard (a lock by name alone
    -- goes to every shard, which Citus refuses with FOR UPDATE).
    IF ledger.distributed_log() THEN
        FOR held IN SELECT DISTINCT x.payment_seq, x.user_id
                   FROM unnest(p_seqs) AS i(name) CROSS JOIN LATERAL ledger.payment_resolved(i.name) AS x
                  WHERE x.payment_seq IS NOT NULL ORDER BY 1 LOOP
            PERFORM FROM ledger.payments WHERE payment_seq = held.payment_seq AND user_id = held.user_id FOR UPDATE;
        END LOOP;
        FOR i IN 1 .. v_count LOOP
            RETURN NEXT ledger.apply_consume(p_seqs[i], p_users[i], p_tokens[i], p_times[i]);
        END LOOP;
        RETURN;
    END IF;
    -- The payment each item names, and its owner, as ledger.payment_resolved finds one name's:
    -- the payments' registry asked for every name in one statement (a call of the function per
    -- item cost 6 % more instructions; BENCHMARKS.md, "The commands' lookups on a distributed
    -- ledger").
    SELECT array_agg(k.names_seq ORDER BY n), array_agg(k.user_id ORDER BY n) INTO v_payments, v_owners
      FROM unnest(p_seqs) WITH ORDINALITY AS i(seq, n) LEFT JOIN ledger.payment_keys k ON k.payment_seq = i.seq;
    -- Locked by name alone: a paymentSeq is one payment's (payment_keys), and one probe per name
    -- costs 13,700 instructions an item less than a join naming each owner (BENCHMARKS.md, "The
    -- commands read through the registries"). On a cluster a set is to be one owner's, so that
    -- this lock stays on one worker (docs/scale-out.md).
    PERFORM FROM ledger.payments WHERE payment_seq = ANY (v_payments) ORDER BY payment_seq FOR UPDATE;
    v_rounds := ARRAY(
        SELECT CASE WHEN seq IS NULL THEN 1 ELSE row_number() OVER (PARTITION BY seq ORDER BY n) END
          FROM unnest(v_payments) WITH ORDINALITY AS i(seq, n) ORDER BY n);

    FOR v_round IN 1 .. (SELECT max(r) FROM unnest(v_rounds) AS r) LOOP
        -- Every item's outcome, in the contract's order of checks, from the payment's row as it
        -- stands now (locked, and changed by the earlier rounds' consumes).
        WITH decided AS (
            SELECT i.n, i.at, x.outcome, x.stream, x.data
              FROM unnest(p_seqs, p_users, p_tokens, p_times, v_payments, v_owners, v_rounds) WITH ORDINALITY
                   AS i(name, usr, token, at, payment, owner, round, n)
              LEFT JOIN ledger.payments p ON p.payment_seq = i.payment AND p.user_id = i.owner
             CROSS JOIN LATERAL ledger.consume_outcome(i.name, i.usr, i.token, i.at,
                        p.payment_seq, p.user_id, p.token_sha256, p.linked_token_sha256, p.product_type,
                        p.consumed_at, p.refunded_at) AS x
             WHERE i.round = v_round
        )
        SELECT array_agg(n ORDER BY n), array_agg(outcome ORDER BY n),
               array_agg(stream ORDER BY n) FILTER (WHERE stream IS NOT NULL),
               array_agg(data ORDER BY n) FILTER (WHERE stream IS NOT NULL),
               array_agg(at ORDER BY n) FILTER (WHERE stream IS NOT NULL)
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
        -- Their owner, when the set has one (on a cluster, the one shard its statements go to).
        PERFORM ledger.project_positions(v_positions, ledger.sole_owner(a_data));
    END LOOP;
    -- In input order (an assignment per item into an array of results costs more than this sort).
    RETURN QUERY SELECT status, code, message, payment_seq, consumed_at, recorded, payments
                   FROM unnest(v_ords, v_outcomes) AS x(n, status, code, message, payment_seq, consumed_at, recorded, payments)
                  ORDER BY n;
END
$$;
REVOKE ALL ON FUNCTION ledger.apply_consumes(text[], text[], bytea[], timestamptz[]) FROM PUBLIC;
