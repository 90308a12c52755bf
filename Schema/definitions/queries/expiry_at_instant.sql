-- A payment's expiry at p_at: an extension counts from its own time.
CREATE OR REPLACE FUNCTION ledger.expiry_at_instant(expiry_time timestamptz, extended_expiry_time timestamptz,
                                         extended_at timestamptz, p_at timestamptz)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN extended_at <= p_at THEN extended_expiry_time ELSE expiry_time END;
