-- The first field of a payment command that breaks the contract's rules, or null: each rule of
-- ledger.field_rules (loaded from Schema/definitions/rules/field_rules.json, the file the
-- library's decoder reads too) in its position order, then the rules between fields. Checked for
-- every payment, whoever records it: the library, a direct ledger_writer call, a restore's items,
-- a store notification's payment.
CREATE OR REPLACE FUNCTION ledger.payment_invalid_field(d jsonb) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    RETURN coalesce(
        (SELECT r.field
           FROM ledger.field_rules r,
                LATERAL (SELECT CASE WHEN r.kind = 'payload' AND d ? 'payloadBase64' THEN d->'payloadBase64'
                                     ELSE d->r.key END AS v) AS x,
                LATERAL (SELECT coalesce(jsonb_typeof(x.v), 'null') AS type, x.v #>> '{}' AS t) AS f
          WHERE r.scope = 'payment'
            AND CASE WHEN f.type = 'null' THEN r.required OR r.default_value IS NOT NULL
                     ELSE NOT CASE r.kind
                -- Lengths in characters: length() counts code points, as Swift counts Unicode scalars.
                WHEN 'text' THEN f.type = 'string' AND length(f.t) BETWEEN 1 AND r.max_length
                WHEN 'enum' THEN f.type = 'string' AND f.t = ANY (r.allowed)
                -- Digits with an optional fraction; negative zero ('-0', '-0.00') equals 0, so its
                -- sign is dropped before the check. No regular expressions here, they cost more
                -- than the rest of the check together.
                WHEN 'decimal' THEN f.type IN ('string', 'number') AND length(f.t) <= r.max_length
                    AND (SELECT q <> '' AND translate(q, '0123456789', '') IN ('', '.')
                                AND left(q, 1) <> '.' AND right(q, 1) <> '.'
                           FROM (SELECT CASE WHEN left(f.t, 1) = '-' AND translate(f.t, '0.', '') = '-'
                                             THEN substr(f.t, 2) ELSE f.t END AS q) AS price)
                WHEN 'currency' THEN f.type = 'string' AND length(f.t) = 3
                    AND translate(f.t, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '') = ''
                -- A token reaches the database only as its SHA-256, in hex.
                WHEN 'token' THEN f.type = 'string' AND length(f.t) = 64
                    AND translate(f.t, '0123456789abcdefABCDEF', '') = ''
                WHEN 'bool' THEN f.type = 'boolean'
                -- The years 0001 to 9999, which the ledger prints and reads back; text with more
                -- than six fraction digits that PostgreSQL rounds into the year 10000 is refused too.
                WHEN 'time' THEN f.type = 'string'
                    AND f.t::timestamptz BETWEEN '0001-01-01 00:00:00+00' AND '9999-12-31 23:59:59.999999+00'
                WHEN 'payload' THEN f.type = 'string' AND octet_length(ledger.payload_bytes(d)) <= r.max_bytes
                WHEN 'integer' THEN f.type = 'number' AND translate(f.t, '0123456789', '') IN ('', '-')
                    AND f.t::numeric BETWEEN -9223372036854775808 AND 9223372036854775807
                END END
          ORDER BY r.position
          LIMIT 1),
        CASE
            WHEN d->>'productType' = 'CONSUMABLE' AND d->>'expiryTime' IS NOT NULL THEN 'expiryTime'
            WHEN d->>'productType' <> 'CONSUMABLE'
                 AND NOT coalesce((d->>'expiryTime')::timestamptz > (d->>'purchaseTime')::timestamptz, false)
                THEN 'expiryTime'
        END);
END
$$;
