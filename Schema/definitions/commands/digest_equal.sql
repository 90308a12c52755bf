-- Whether two token digests are equal; false (never null) for a missing or empty digest.
CREATE OR REPLACE FUNCTION ledger.digest_equal(a bytea, b bytea) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(length(a) > 0 AND length(a) = length(b) AND sha256(a) = sha256(b), false);
