-- The outcome of one consume (docs/contract.md §2.2), in the contract's order of checks, and the
-- event it appends: the one definition of the consume rules, which ledger.apply_consumes applies
-- to a round of a set and ledger.apply_consume to a consume alone.
--   p_name, p_user, p_token, p_at: the consume (the name it gives, its user, its token digest or
--     null, its time);
--   f_*: the payment the name resolves to, as it stands now (f_seq null: none).
-- Returns the result and, for a consume that is accepted, its PaymentConsumed event's stream and
-- data (null otherwise). A set-returning SQL function, inlined by the planner where it is used.
CREATE OR REPLACE FUNCTION ledger.consume_outcome(
        p_name text, p_user text, p_token bytea, p_at timestamptz,
        f_seq text, f_user text, f_token bytea, f_linked bytea, f_type text,
        f_consumed_at timestamptz, f_refunded_at timestamptz)
RETURNS TABLE (outcome ledger.command_result, stream text, data jsonb)
LANGUAGE sql STABLE AS $$
    SELECT o.outcome,
           CASE WHEN (o.outcome).status = 'consumed' THEN 'payment:' || f_seq END,
           CASE WHEN (o.outcome).status = 'consumed' THEN jsonb_build_object('paymentSeq', f_seq, 'userId', p_user) END
      FROM (SELECT CASE
                   WHEN f_seq IS NULL THEN
                        ledger.rejected('NOT_FOUND', format('no payment %s', p_name), p_name)
                   WHEN f_user IS DISTINCT FROM p_user THEN
                        ledger.rejected('USER_INVALID', format('payment %s belongs to another user', p_name), p_name)
                   WHEN NOT (ledger.digest_equal(coalesce(f_token, f_linked), p_token)
                             OR (coalesce(f_token, f_linked) IS NULL AND p_token IS NULL)) THEN
                        ledger.rejected('TOKEN_INVALID',
                            CASE WHEN coalesce(f_token, f_linked) IS NULL
                                 THEN format('payment %s was learned from the store and has no purchase token: consume it without one', p_name)
                                 ELSE format('the purchase token does not match payment %s', p_name) END, p_name)
                   WHEN f_type = 'AUTO_RENEWABLE' THEN ledger.rejected('NOT_CONSUMABLE',
                        format('payment %s is an AUTO_RENEWABLE subscription, which is not consumed', p_name), p_name)
                   WHEN f_consumed_at IS NOT NULL THEN
                        ROW('alreadyConsumed', NULL, NULL, p_name, f_consumed_at, NULL, NULL)::ledger.command_result
                   WHEN f_refunded_at IS NOT NULL THEN ledger.rejected('REFUNDED',
                        format('payment %s was refunded at %s and was never consumed', p_name,
                               to_char(f_refunded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), p_name)
                   ELSE ROW('consumed', NULL, NULL, p_name, p_at, NULL, NULL)::ledger.command_result
                   END AS outcome
            OFFSET 0) AS o
$$;
REVOKE ALL ON FUNCTION ledger.consume_outcome(text, text, bytea, timestamptz, text, text, bytea, bytea, text,
                                              timestamptz, timestamptz) FROM PUBLIC;
