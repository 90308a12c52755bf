-- The one entry point of the write path: runs commands (ledger.command, the typed form the
-- library binds) and returns one result per command, in input order, each command atomic on its
-- own: a refusal is a result and writes nothing, the others still apply. An error (a deadlock, a
-- lost connection) fails the whole call, which wrote nothing.
--
-- A command alone runs its own function (ledger.run_command), which takes its keys itself; a
-- batch of payments only, or of consumes only, is one set of its kind. Any other batch takes
-- every command's keys first, at once, in the ledger's one order (ledger.lock_keys
-- of ledger.command_lock_keys), so that two batches never wait for each other in a cycle; then
-- runs the steps of ledger.plan_commands (ledger.run_step): a round's payments as one set, its
-- consumes as one set, the other commands one by one.
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
    v_results ledger.command_result[];
    v_order   integer[];
    v_step    integer[] := '{}';
    r         ledger.command_result;
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
    IF (SELECT bool_and(c.kind IN ('purchase', 'renewal')) OR bool_and(c.kind = 'consume') FROM unnest(p_commands) AS c) THEN
        RETURN QUERY SELECT * FROM ledger.run_step(p_commands, ARRAY(SELECT generate_series(1, v_count)));
        RETURN;
    END IF;
    SELECT x.keys, x.steps INTO v_keys, v_steps FROM ledger.plan_commands(p_commands) AS x;
    PERFORM ledger.lock_keys(v_keys);
    v_results := array_fill(NULL::ledger.command_result, ARRAY[v_count]);
    v_order := ARRAY(SELECT ord FROM unnest(v_steps) WITH ORDINALITY AS x(step, ord) ORDER BY step, ord);
    FOR n IN 1 .. v_count LOOP
        v_step := v_step || v_order[n];
        -- A step ends where the next command belongs to another one.
        CONTINUE WHEN n < v_count AND v_steps[v_order[n + 1]] = v_steps[v_order[n]];
        i := 0;
        FOR r IN SELECT * FROM ledger.run_step(p_commands, v_step) LOOP
            i := i + 1;
            v_results[v_step[i]] := r;
        END LOOP;
        v_step := '{}';
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(v_results);
END
$$;
REVOKE ALL ON FUNCTION ledger.execute_commands(ledger.command[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.execute_commands(ledger.command[]) TO ledger_writer;
