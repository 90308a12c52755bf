-- Whether a payment command breaks one rule of ledger.field_rules (loaded from
-- Schema/definitions/rules/field_rules.json, the file the library's decoder reads too): the
-- value under the rule's key is missing when required, of the wrong JSON type, too long, or
-- not of the rule's kind. ledger.apply_payments checks every payment against every rule, in
-- position order, and names the first field that breaks one; ledger.payment_fields_invalid then
-- checks the rules between fields.
-- One expression, which the planner inlines into the statement that checks a whole batch (so
-- it is compiled once per batch, not called once per rule and payment): it looks the value's
-- type up once (a simple CASE) and uses no subqueries or regular expressions (each costs more
-- than the rest together). BENCHMARKS.md has the figures.
-- A database made before this function may hold payment_invalid_field, a per-payment loop over
-- the rules: dropped here.
DROP FUNCTION IF EXISTS ledger.payment_invalid_field(jsonb);
-- A rule reaches the checks as a value of a type of its own, ledger.field_rule, the shape of a
-- row of ledger.field_rules, not as that table's row type: Citus makes no function that takes or
-- returns a Citus table's row type on the workers, and a purchase run on a worker failed on this
-- function, ledger.payment_refused_field and ledger.payment_rules. The forms that took the row
-- type are dropped.
DO $field_rule$
BEGIN
    IF to_regtype('ledger.field_rule') IS NULL THEN
        CREATE TYPE ledger.field_rule AS (
            position      integer,
            scope         text,
            field         text,
            key           text,
            aliases       text[],
            kind          text,
            max_length    integer,
            max_bytes     integer,
            required      boolean,
            default_value jsonb,
            allowed       text[]
        );
    END IF;
END
$field_rule$;
DROP FUNCTION IF EXISTS ledger.payment_refused_field(text, jsonb, boolean, ledger.field_rules[]);
DROP FUNCTION IF EXISTS ledger.field_invalid(ledger.field_rules, jsonb);
CREATE OR REPLACE FUNCTION ledger.field_invalid(r ledger.field_rule, d jsonb) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE coalesce(jsonb_typeof(d->r.key), 'null')
        WHEN 'null' THEN r.required OR r.default_value IS NOT NULL
            -- A payload holding U+0000 comes as payloadBase64 (the bytes in base64).
            OR (r.kind = 'payload' AND d ? 'payloadBase64'
                AND (jsonb_typeof(d->'payloadBase64') <> 'string'
                     OR octet_length(ledger.payload_bytes(d)) > r.max_bytes))
        WHEN 'string' THEN CASE r.kind
            -- Characters: length() counts code points, as Swift counts Unicode scalars.
            WHEN 'text' THEN NOT length(d->>r.key) BETWEEN 1 AND r.max_length
            WHEN 'enum' THEN NOT (d->>r.key) = ANY (r.allowed)
            -- Digits with an optional fraction; negative zero ('-0', '-0.00') equals 0,
            -- so its sign is dropped before the check.
            WHEN 'decimal' THEN length(d->>r.key) > r.max_length OR right(d->>r.key, 1) = '.' OR NOT (
                translate(CASE WHEN translate(d->>r.key, '0.', '') = '-' THEN substr(d->>r.key, 2) ELSE d->>r.key END,
                          '0123456789', '') IN ('', '.')
                AND left(CASE WHEN translate(d->>r.key, '0.', '') = '-' THEN substr(d->>r.key, 2) ELSE d->>r.key END, 1)
                    NOT IN ('', '.'))
                -- No leading zero before other digits (007), as the library reads prices.
                OR (left(d->>r.key, 1) = '0' AND substr(d->>r.key, 2, 1) NOT IN ('', '.'))
            WHEN 'currency' THEN length(d->>r.key) <> r.max_length
                OR translate(d->>r.key, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '') <> ''
            -- A token reaches the database only as its SHA-256, in hex.
            WHEN 'token' THEN length(d->>r.key) <> 64 OR translate(d->>r.key, '0123456789abcdefABCDEF', '') <> ''
            -- The years 0001 to 9999, which the ledger prints and reads back; text with
            -- more than six fraction digits that PostgreSQL rounds into the year 10000 too.
            -- Text that is not a time as the library reads one is refused before the
            -- cast, which would fail the statement instead of naming the field.
            WHEN 'time' THEN CASE WHEN ledger.time_text_valid(d->>r.key)
                THEN NOT (d->>r.key)::timestamptz
                    BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
                ELSE true END
            WHEN 'payload' THEN octet_length(ledger.payload_bytes(d)) > r.max_bytes
            ELSE true
            END
        WHEN 'number' THEN CASE r.kind
            WHEN 'decimal' THEN length(d->>r.key) > r.max_length
                OR translate(d->>r.key, '0123456789', '') NOT IN ('', '.')
            WHEN 'integer' THEN translate(d->>r.key, '0123456789', '') NOT IN ('', '-')
                OR NOT (d->>r.key)::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
            ELSE true
            END
        WHEN 'boolean' THEN r.kind <> 'bool'
        ELSE true
        END;
REVOKE ALL ON FUNCTION ledger.field_invalid(ledger.field_rule, jsonb) FROM PUBLIC;
