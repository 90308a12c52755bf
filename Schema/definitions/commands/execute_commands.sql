-- The one entry point of the write path: runs commands (ledger.command, the typed form the
-- library binds) and returns one result per command, in input order, each command atomic on its
-- own: a refusal is a result and writes nothing, the others still apply. An error (a deadlock, a
-- lost connection) fails the whole call, which wrote nothing.
--
-- A command alone runs its own function (ledger.run_command), which takes its keys itself; a
-- batch of payments only, or of consumes only, is one set of its kind. Any other batch takes
-- every command's keys first, at once, in the ledger's one order (ledger.lock_keys
-- of ledger.command_lock_keys), so that two batches never wait for each other in a cycle; then
-- runs the steps of ledger.plan_commands: a round's payments as one set (ledger.record_payments),
-- its consumes as one set (ledger.consume_set), the other commands one by one.
--
-- Security invoker: each command runs under the caller's rights to its function (a notification
-- needs ledger_store's, the others ledger_writer's).
CREATE OR REPLACE FUNCTION ledger.execute_commands(p_commands ledger.command[])
RETURNS SETOF ledger.command_result
LANGUAGE plpgsql AS $$
DECLARE
    v_count   integer := coalesce(cardinality(p_commands), 0);
    v_keys    text[];
    v_steps   integer[];   -- each command's step
    v_kinds   text[];
    v_results ledger.command_result[];
    v_order   integer[];
    v_step    integer[] := '{}';
    v_first   ledger.command;
    v_set     ledger.command_result[];
    i         integer;
    n         integer;
BEGIN
    IF v_count = 1 THEN
        RETURN NEXT ledger.run_command(p_commands[1]);
        RETURN;
    ELSIF v_count = 0 THEN
        RETURN;
    END IF;
    -- A batch of one kind that has a set function of its own (payments, as a burst of purchases
    -- under group commit makes, or consumes) is that one set: its function takes the items'
    -- locks and orders the items that share a payment, a store transaction or a token itself,
    -- as a step of the plan does (ledger.apply_payments, ledger.apply_consumes).
    v_kinds := ARRAY(SELECT DISTINCT c.kind FROM unnest(p_commands) AS c);
    IF v_kinds <@ ARRAY['purchase', 'renewal'] OR v_kinds = ARRAY['consume'] THEN
        v_steps := array_fill(1, ARRAY[v_count]);
    ELSE
        SELECT x.keys, x.steps INTO v_keys, v_steps FROM ledger.plan_commands(p_commands) AS x;
        PERFORM ledger.lock_keys(v_keys);
    END IF;
    v_results := array_fill(NULL::ledger.command_result, ARRAY[v_count]);
    v_order := ARRAY(SELECT ord FROM unnest(v_steps) WITH ORDINALITY AS x(step, ord) ORDER BY step, ord);
    FOR n IN 1 .. v_count LOOP
        v_step := v_step || v_order[n];
        -- A step ends where the next command belongs to another one.
        CONTINUE WHEN n < v_count AND v_steps[v_order[n + 1]] = v_steps[v_order[n]];
        v_first := p_commands[v_step[1]];
        IF v_first.kind IN ('purchase', 'renewal') THEN
            v_set := ARRAY(SELECT r FROM ledger.record_payments(
                               (SELECT jsonb_agg(CASE WHEN c.job IS NULL
                                                      THEN jsonb_build_object('kind', c.kind, 'data', c.data)
                                                      ELSE jsonb_build_object('kind', c.kind, 'data', c.data, 'job', c.job) END
                                                 ORDER BY o)
                                  FROM unnest(v_step) WITH ORDINALITY AS s(i, o),
                                       LATERAL (SELECT (p_commands[s.i]).*) c)) AS r);
        ELSIF v_first.kind = 'consume' AND cardinality(v_step) > 1 THEN
            v_set := ARRAY(SELECT r FROM ledger.consume_set(
                               ARRAY(SELECT p_commands[s].payment_seq FROM unnest(v_step) WITH ORDINALITY AS x(s, o) ORDER BY o),
                               ARRAY(SELECT p_commands[s].user_id FROM unnest(v_step) WITH ORDINALITY AS x(s, o) ORDER BY o),
                               ARRAY(SELECT p_commands[s].token_sha256 FROM unnest(v_step) WITH ORDINALITY AS x(s, o) ORDER BY o),
                               ARRAY(SELECT p_commands[s].at FROM unnest(v_step) WITH ORDINALITY AS x(s, o) ORDER BY o)) AS r);
        ELSE
            v_set := ARRAY[ledger.run_command(v_first)];
        END IF;
        FOR i IN 1 .. cardinality(v_step) LOOP
            v_results[v_step[i]] := v_set[i];
        END LOOP;
        v_step := '{}';
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(v_results);
END
$$;
REVOKE ALL ON FUNCTION ledger.execute_commands(ledger.command[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.execute_commands(ledger.command[]) TO ledger_writer;
