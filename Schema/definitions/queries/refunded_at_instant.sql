-- Whether a payment was refunded at p_at (a reversed refund counted between the two).
CREATE OR REPLACE FUNCTION ledger.refunded_at_instant(refunded_at timestamptz, reversed_refund_at timestamptz,
                                           refund_reversed_at timestamptz, p_at timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(refunded_at <= p_at, false)
    OR coalesce(reversed_refund_at <= p_at AND refund_reversed_at > p_at, false);
