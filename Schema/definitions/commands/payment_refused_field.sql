-- The field for which a purchase or a renewal is refused as INVALID_INPUT, or no row's field
-- (null) when its fields hold: the first field, in the rules' order (p_rules: the 'payment' rows
-- of ledger.field_rules by position, ledger.payment_rules), that breaks its rule
-- (ledger.field_invalid), then the rules between fields (ledger.payment_fields_invalid), then the
-- kind and a renewal's lineage, as the library reads a line. A payment from a store notification
-- (p_from_store) has no purchase token: a stand-in takes its place.
-- A set-returning SQL function so that the planner inlines it, subquery included: into the
-- statement that checks a whole round of ledger.apply_payments, and into the one statement of
-- ledger.apply_payment that checks a payment alone. OFFSET 0 keeps each computed once per
-- payment: a flattened subquery is computed again wherever its column is named (the field is
-- named several times by the statements that use it, the stand-in by every rule).
-- The rules come in as a value (ledger.payment_rules(), a constant in the caller's plan), and no
-- table is read here: Citus plans no SQL function that reads one of its tables (field_rules is a
-- reference table there), inlined or not, and it runs a whole-row reference against its shard,
-- whose row type is another.
DROP FUNCTION IF EXISTS ledger.payment_refused_field(text, jsonb, boolean);
CREATE OR REPLACE FUNCTION ledger.payment_refused_field(p_kind text, d jsonb, p_from_store boolean,
                                                        p_rules ledger.field_rule[])
RETURNS TABLE (field text)
LANGUAGE sql STABLE AS $$
    SELECT coalesce((SELECT r.field FROM unnest(p_rules) AS r
                      WHERE ledger.field_invalid(r, c.checkable)
                      ORDER BY r.position LIMIT 1),
                    ledger.payment_fields_invalid(d),
                    CASE WHEN p_kind IS DISTINCT FROM 'purchase' AND p_kind IS DISTINCT FROM 'renewal' THEN 'kind'
                         WHEN p_kind = 'renewal' AND d->>'originalTransactionId' IS NULL THEN 'originalTransactionId' END)
      FROM (SELECT CASE WHEN p_from_store AND d->>'purchaseTokenSha256' IS NULL
                        THEN d || jsonb_build_object('purchaseTokenSha256', repeat('0', 64))
                        ELSE d END AS checkable
            OFFSET 0) AS c
     OFFSET 0
$$;
REVOKE ALL ON FUNCTION ledger.payment_refused_field(text, jsonb, boolean, ledger.field_rule[]) FROM PUBLIC;
