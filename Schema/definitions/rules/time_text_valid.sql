-- Whether text is a time as the contract writes one and the library reads it (Swift's
-- Timestamp.parseISO8601): YYYY-MM-DD, then T, t or a space, then HH:MM:SS, an optional fraction
-- of 1 to 9 digits, and a zone (Z, z, ±HH, ±HHMM or ±HH:MM); years 0001 to 9999, days within
-- the month (leap years included), hours 00-23, minutes and seconds 00-59. So that a direct
-- caller's time that is not one is refused naming its field (ledger.field_invalid) instead of
-- failing the cast; the instant's own range is checked after the cast.
CREATE OR REPLACE FUNCTION ledger.time_text_valid(t text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    v_year  integer;
    v_month integer;
    v_days  integer;
    v_zone  text;
BEGIN
    IF t IS NULL OR length(t) NOT BETWEEN 20 AND 35
       OR substr(t, 5, 1) <> '-' OR substr(t, 8, 1) <> '-' OR substr(t, 11, 1) NOT IN ('T', 't', ' ')
       OR substr(t, 14, 1) <> ':' OR substr(t, 17, 1) <> ':'
       OR translate(substr(t, 1, 4) || substr(t, 6, 2) || substr(t, 9, 2) || substr(t, 12, 2)
                    || substr(t, 15, 2) || substr(t, 18, 2), '0123456789', '') <> '' THEN
        RETURN false;
    END IF;
    v_year := substr(t, 1, 4)::integer;
    v_month := substr(t, 6, 2)::integer;
    v_days := CASE WHEN v_month IN (4, 6, 9, 11) THEN 30
                   WHEN v_month <> 2 THEN 31
                   WHEN (v_year % 4 = 0 AND v_year % 100 <> 0) OR v_year % 400 = 0 THEN 29
                   ELSE 28 END;
    IF v_year < 1 OR v_month NOT BETWEEN 1 AND 12 OR substr(t, 9, 2)::integer NOT BETWEEN 1 AND v_days
       OR substr(t, 12, 2)::integer > 23 OR substr(t, 15, 2)::integer > 59 OR substr(t, 18, 2)::integer > 59 THEN
        RETURN false;
    END IF;
    v_zone := substr(t, 20);
    IF left(v_zone, 1) = '.' THEN
        -- 1 to 9 digits, then the zone.
        v_zone := ltrim(substr(v_zone, 2), '0123456789');
        IF length(t) - 20 - length(v_zone) NOT BETWEEN 1 AND 9 THEN
            RETURN false;
        END IF;
    END IF;
    RETURN v_zone IN ('Z', 'z')
        OR (left(v_zone, 1) IN ('+', '-') AND length(v_zone) IN (3, 5, 6)
            AND (length(v_zone) <> 6 OR substr(v_zone, 4, 1) = ':')
            AND translate(substr(v_zone, 2, 2) || substr(v_zone, length(v_zone) - 1, 2), '0123456789', '') = ''
            AND substr(v_zone, 2, 2)::integer <= 23
            AND (length(v_zone) = 3 OR substr(v_zone, length(v_zone) - 1, 2)::integer <= 59));
END
$$;
REVOKE ALL ON FUNCTION ledger.time_text_valid(text) FROM PUBLIC;
