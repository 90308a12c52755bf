-- The field rules a purchase or a renewal must meet (the 'payment' rows of ledger.field_rules, in
-- position order), as a value: what ledger.apply_payment and ledger.apply_payments hand to
-- ledger.payment_refused_field.
--
-- The rows are loaded from rules/field_rules.json before this file runs (the rules group comes
-- first), and change only with it, at `ledger migrate`. So the function is made here, each time
-- the definitions are applied, returning those rows as a constant: IMMUTABLE, the planner folds
-- it into the plan of the statement that checks payments (a cached plan is invalidated when the
-- function is made again), and no command reads the table. Read from the table at each command
-- instead, a lone record cost 5 % more instructions (BENCHMARKS.md, "The catalogs as reference
-- tables"). On Citus, where field_rules is a reference table, no statement that checks a payment
-- reads a Citus table through a SQL function, which Citus cannot plan (docs/scale-out.md).
DO $payment_rules$
BEGIN
    -- The form that returned ledger.field_rules' row type (ledger.field_invalid says why not).
    IF (SELECT prorettype FROM pg_proc WHERE oid = to_regprocedure('ledger.payment_rules()')) <> 'ledger.field_rule[]'::regtype THEN
        DROP FUNCTION ledger.payment_rules();
    END IF;
    EXECUTE format($create$
        CREATE OR REPLACE FUNCTION ledger.payment_rules() RETURNS ledger.field_rule[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN %L::ledger.field_rule[]
        $create$,
        ARRAY(SELECT ROW(r.*)::ledger.field_rule FROM ledger.field_rules r WHERE r.scope = 'payment' ORDER BY r.position)::text);
END
$payment_rules$;
REVOKE ALL ON FUNCTION ledger.payment_rules() FROM PUBLIC;
