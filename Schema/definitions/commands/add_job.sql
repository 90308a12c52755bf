-- Writes a job (docs/contract.md §6.2) in the caller's transaction, unless one with its purpose
-- exists (a replayed notification adds none). j: {kind, purpose, args}; p_secret: the purchase
-- token the store's API needs, kept in the job only (ledger.jobs says why).
CREATE OR REPLACE FUNCTION ledger.add_job(j jsonb, p_secret text, p_caused_by bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO ledger.jobs (kind, purpose, args, secret, caused_by)
    VALUES (j->>'kind', j->>'purpose', coalesce(j->'args', '{}'), p_secret, p_caused_by)
    ON CONFLICT (purpose) DO NOTHING;
$$;
REVOKE ALL ON FUNCTION ledger.add_job(jsonb, text, bigint) FROM PUBLIC;
