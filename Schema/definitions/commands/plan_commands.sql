-- How a batch of commands runs in one transaction (ledger.execute_commands): in steps, each a
-- statement. Returns each command's step, numbered from 1 in the order the steps run.
--
-- A command's round is one after the last round of any earlier command sharing one of its keys
-- (ledger.command_lock_keys), and never before a barrier's: a restore, a notification, a product
-- or an account link reads or changes more than its keys name (a restore lists the user's
-- subscription payments; the others change how later commands read), so it runs after every
-- earlier command and before every later one. Consumes and refunds keep their order: either
-- may name its payment by an alias, a key no command foresees, so two of them may touch one
-- payment without sharing a key; a refund runs one round after every earlier consume and
-- refund, a consume one round after every earlier refund and in the round of the latest earlier
-- consume or a later one. A cancel keeps only its lineage key's order. Payments of one lineage
-- may share a round when no other command on the lineage came between them (ledger.apply_payments
-- orders them inside its set).
-- In a round, every purchase and renewal is one step (one ledger.record_payments set) where its
-- first payment stands, its consumes one step (one ledger.consume_set) before that and one after
-- it, so that each consume keeps its place relative to the payments; the others one step each.
CREATE OR REPLACE FUNCTION ledger.plan_commands(p_commands ledger.command[], OUT keys text[], OUT steps integer[])
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_count       integer := coalesce(cardinality(p_commands), 0);
    -- Every (command, key) pair, by command: the key, its number among the batch's distinct
    -- keys, and whether it names a lineage.
    e_ord         integer[];
    e_key         integer[];
    e_lineage     boolean[];
    v_keys        integer;
    v_last        integer[];   -- by key number: the last round that holds it
    v_payment_last boolean[];  -- by key number: whether that last holder is a payment (lineage keys)
    v_rounds      integer[];   -- by command
    v_count_rounds integer := 0;
    v_floor       integer := 0;
    v_last_consume integer;
    v_last_in_order integer;
    v_kind        text;
    v_payment     boolean;
    r             integer;
    j             integer := 1;
    jj            integer;
    v_round       integer := -1;
    v_step        integer := 0;
    v_payments_step integer;
    v_consumes_step integer;
    i             integer;
BEGIN
    IF v_count = 0 THEN
        keys := '{}';
        steps := '{}';
        RETURN;
    END IF;
    SELECT coalesce(array_agg(key ORDER BY ord, pos), '{}'), coalesce(array_agg(ord ORDER BY ord, pos), '{}'),
           coalesce(array_agg(kid ORDER BY ord, pos), '{}'), coalesce(array_agg(key LIKE 'lineage:%' ORDER BY ord, pos), '{}'),
           coalesce(max(kid), 0)
      INTO keys, e_ord, e_key, e_lineage, v_keys
      FROM (SELECT ord, pos, key, dense_rank() OVER (ORDER BY key) AS kid
              FROM generate_subscripts(p_commands, 1) AS ord,
                   unnest(ledger.command_lock_keys(p_commands[ord])) WITH ORDINALITY AS x(key, pos)
             WHERE key IS NOT NULL) keyed;
    IF v_count = 1 THEN
        steps := ARRAY[1];
        RETURN;
    END IF;
    v_last := array_fill(NULL::integer, ARRAY[greatest(v_keys, 1)]);
    v_payment_last := array_fill(false, ARRAY[greatest(v_keys, 1)]);
    v_rounds := array_fill(0, ARRAY[v_count]);
    FOR i IN 1 .. v_count LOOP
        v_kind := p_commands[i].kind;
        v_payment := v_kind IN ('purchase', 'renewal');
        IF v_kind IN ('restore', 'notification', 'product', 'accountLink') THEN
            r := v_count_rounds;
            v_floor := r + 1;
        ELSE
            r := v_floor;
            jj := j;
            WHILE jj <= cardinality(e_ord) AND e_ord[jj] = i LOOP
                IF v_last[e_key[jj]] IS NOT NULL THEN
                    r := greatest(r, v_last[e_key[jj]] + CASE WHEN v_payment AND v_payment_last[e_key[jj]] THEN 0 ELSE 1 END);
                END IF;
                jj := jj + 1;
            END LOOP;
            IF v_kind IN ('consume', 'refund') THEN
                r := greatest(r, coalesce(v_last_in_order + 1, 0),
                              CASE WHEN v_last_consume IS NULL THEN 0 WHEN v_kind = 'consume' THEN v_last_consume ELSE v_last_consume + 1 END);
                IF v_kind = 'consume' THEN v_last_consume := r; ELSE v_last_in_order := r; END IF;
            END IF;
        END IF;
        WHILE j <= cardinality(e_ord) AND e_ord[j] = i LOOP
            v_last[e_key[j]] := r;
            v_payment_last[e_key[j]] := v_payment AND e_lineage[j];
            j := j + 1;
        END LOOP;
        v_rounds[i] := r;
        v_count_rounds := greatest(v_count_rounds, r + 1);
    END LOOP;
    -- The steps, round by round.
    steps := array_fill(0, ARRAY[v_count]);
    FOR i IN SELECT ord FROM unnest(v_rounds) WITH ORDINALITY AS x(round, ord) ORDER BY round, ord LOOP
        IF v_rounds[i] <> v_round THEN
            v_round := v_rounds[i];
            v_payments_step := NULL;
            v_consumes_step := NULL;
        END IF;
        v_kind := p_commands[i].kind;
        IF v_kind IN ('purchase', 'renewal') THEN
            IF v_payments_step IS NULL THEN
                v_step := v_step + 1;
                v_payments_step := v_step;
                v_consumes_step := NULL;
            END IF;
            steps[i] := v_payments_step;
        ELSIF v_kind = 'consume' THEN
            IF v_consumes_step IS NULL THEN
                v_step := v_step + 1;
                v_consumes_step := v_step;
            END IF;
            steps[i] := v_consumes_step;
        ELSE
            v_step := v_step + 1;
            steps[i] := v_step;
        END IF;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION ledger.plan_commands(ledger.command[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.plan_commands(ledger.command[]) TO ledger_writer;
