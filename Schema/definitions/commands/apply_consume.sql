-- Consumes one payment (p_name: its name or another name of it; p_user; p_token: the token's
-- digest, or null for a payment learned from a store notification; p_at): the same rules as a
-- set (ledger.payment_resolved, ledger.consume_outcome), without the set's rounds and arrays.
-- The payment's row is locked first, as a set locks its payments' rows: concurrent consumes of
-- one payment queue, and the first wins.
CREATE OR REPLACE FUNCTION ledger.apply_consume(p_name text, p_user text, p_token bytea, p_at timestamptz)
RETURNS ledger.command_result
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    r             record;      -- the payment the name stands for, and its owner (the registry's)
    -- The payment the name resolves to, locked, as it stands once the lock is ours.
    f_seq         text;
    f_user        text;
    f_token       bytea;
    f_linked      bytea;
    f_type        text;
    f_consumed_at timestamptz;
    f_refunded_at timestamptz;
    o             record;
    v_pos         bigint;
BEGIN
    -- The writers' gate first (ledger.writers_gate), as every command takes it.
    PERFORM pg_advisory_xact_lock_shared(ledger.writers_gate());
    -- Two statements, the registry's and the owner's: on a cluster they live on different nodes.
    r := ledger.payment_resolved(p_name);
    SELECT p.payment_seq, p.user_id, p.token_sha256, p.linked_token_sha256, p.product_type, p.consumed_at, p.refunded_at
      INTO f_seq, f_user, f_token, f_linked, f_type, f_consumed_at, f_refunded_at
      FROM ledger.payments p WHERE p.payment_seq = r.payment_seq AND p.user_id = r.user_id
       FOR UPDATE;
    SELECT x.* INTO o
      FROM ledger.consume_outcome(p_name, p_user, p_token, p_at,
                                  f_seq, f_user, f_token, f_linked, f_type, f_consumed_at, f_refunded_at) AS x;
    IF o.stream IS NOT NULL THEN
        -- The payment stream's head is locked by append: a refund or a link of another name may
        -- append to it at the same time.
        v_pos := ledger.append(o.stream, 'PaymentConsumed', o.data, p_at);
        PERFORM ledger.project_positions(ARRAY[v_pos], ledger.event_owner(o.data, NULL));
    END IF;
    RETURN o.outcome;
END
$$;
REVOKE ALL ON FUNCTION ledger.apply_consume(text, text, bytea, timestamptz) FROM PUBLIC;
