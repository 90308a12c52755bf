-- A payment's expiry as a number that orders as ORDER BY expiry DESC ranks it (none is
-- greatest: a payment without an expiry outlives every dated one), so that refresh_states can
-- keep the live payment as a running max(ARRAY[expiry_order(expiry), pos]) in one ordered pass.
-- Microseconds since the epoch (a payment's times are years 0000 to 9999: field_rules), from
-- the interval since it: extract(epoch FROM timestamptz) is only STABLE, and an IMMUTABLE
-- function whose body is not would not be inlined, but run as a query per row.
CREATE OR REPLACE FUNCTION ledger.expiry_order(expiry timestamptz)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce((extract(epoch FROM expiry - timestamptz 'epoch') * 1000000)::bigint, 9223372036854775807);
