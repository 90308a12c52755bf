-- Whether text is a time as the contract writes one and the library reads it (Swift's
-- Timestamp.parseISO8601): YYYY-MM-DD, then T, t or a space, then HH:MM:SS, an optional fraction
-- of 1 to 9 digits, and a zone (Z, z, ±HH, ±HHMM or ±HH:MM); years 0001 to 9999, days within
-- the month (leap years included), hours 00-23, minutes and seconds 00-59. So that a direct
-- caller's time that is not one is refused naming its field (ledger.field_invalid) instead of
-- failing the cast; the instant's own range is checked after the cast.
-- One expression, which the planner inlines into ledger.field_invalid: the pattern holds the
-- ranges, and the days of the month are counted once it matches. (A PL/pgSQL body would compile
-- its expressions again in every transaction: about 30 µs a payment, BENCHMARKS.md.)
CREATE OR REPLACE FUNCTION ledger.time_text_valid(t text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN t ~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?([Zz]|[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?)$'
    THEN substr(t, 1, 4) <> '0000'
         AND substr(t, 9, 2)::integer <= CASE
             WHEN substr(t, 6, 2) IN ('04', '06', '09', '11') THEN 30
             WHEN substr(t, 6, 2) <> '02' THEN 31
             WHEN (substr(t, 1, 4)::integer % 4 = 0 AND substr(t, 1, 4)::integer % 100 <> 0)
                  OR substr(t, 1, 4)::integer % 400 = 0 THEN 29
             ELSE 28 END
    ELSE false
    END;
REVOKE ALL ON FUNCTION ledger.time_text_valid(text) FROM PUBLIC;
