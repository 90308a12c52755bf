-- The contract's field rules as a table, for the command functions: ledger.payment_invalid_field
-- (Schema/definitions/commands/payment_invalid_field.sql) checks a payment against the 'payment'
-- rows, in position order. The rows are derived data: `ledger migrate` replaces them with the
-- contents of Schema/definitions/rules/field_rules.json whenever the definitions change, the
-- file the library's decoder reads too (FieldRules), so both sides hold the same rules.

CREATE TABLE ledger.field_rules (
    position      integer PRIMARY KEY,
    scope         text NOT NULL CHECK (scope IN ('payment', 'command')),
    field         text NOT NULL,
    key           text NOT NULL,
    aliases       text[] NOT NULL DEFAULT '{}',
    kind          text NOT NULL
                  CHECK (kind IN ('text', 'enum', 'decimal', 'currency', 'token', 'bool', 'time', 'payload', 'integer')),
    max_length    integer CHECK (max_length > 0),
    max_bytes     integer CHECK (max_bytes > 0),
    required      boolean NOT NULL,
    default_value jsonb,
    allowed       text[] NOT NULL DEFAULT '{}',
    UNIQUE (scope, field)
);
COMMENT ON TABLE ledger.field_rules IS 'The contract''s field rules (CONTRACT.md §2.1), loaded by ledger migrate from Schema/definitions/rules/field_rules.json.';
COMMENT ON COLUMN ledger.field_rules.field IS 'The contract''s name of the field, which a refusal names.';
COMMENT ON COLUMN ledger.field_rules.key IS 'Its key in the command the database receives (a token: the key of its SHA-256 digest).';
COMMENT ON COLUMN ledger.field_rules.max_length IS 'At most this many characters (Unicode scalars; length() of the text).';
COMMENT ON COLUMN ledger.field_rules.required IS 'Must be given; a field with a default_value may be left out of a line, but the command the library sends carries it.';

REVOKE ALL ON ledger.field_rules FROM PUBLIC;
GRANT SELECT ON ledger.field_rules TO ledger_writer, ledger_reader;
