-- API keys of `ledger serve` (`ledger keys add|list|revoke`): each a bearer token with one role.
-- Only the SHA-256 of a key is kept; the key itself is printed once, when it is made. Keys are
-- made and revoked by the role that ran `ledger migrate`; the server, running as ledger_writer
-- or ledger_reader, reads the live keys through ledger.live_api_keys()
-- (Schema/definitions/queries/live_api_keys.sql) and nothing else.

CREATE TABLE ledger.api_keys (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    role       text NOT NULL CHECK (role IN ('writer', 'reader', 'notifications')),
    key_sha256 bytea NOT NULL UNIQUE CHECK (octet_length(key_sha256) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz,
    CHECK (revoked_at IS NULL OR revoked_at >= created_at)
);
COMMENT ON TABLE ledger.api_keys IS 'API keys of the HTTP server: role and SHA-256 of the key (never the key); a revoked key has revoked_at.';
COMMENT ON COLUMN ledger.api_keys.role IS 'writer: commands and queries; reader: queries and reports; notifications: the store webhook routes.';
COMMENT ON COLUMN ledger.api_keys.key_sha256 IS 'sha256 of the key''s UTF-8 text, as the server computes it from the Authorization header.';

REVOKE ALL ON ledger.api_keys FROM PUBLIC;

-- `GET /readyz` compares the applied migrations with the server's own, whatever role it runs as.
GRANT SELECT ON ledger.schema_migrations, ledger.schema_definitions TO ledger_writer, ledger_reader;
