-- The payload of a payment event as bytes (see the comment on ledger.events.data).
CREATE OR REPLACE FUNCTION ledger.payload_bytes(d jsonb) RETURNS bytea
-- STABLE (convert_to is), so that the planner inlines it into project_range's statements.
LANGUAGE sql STABLE PARALLEL SAFE
RETURN CASE WHEN d ? 'payloadBase64' THEN decode(d->>'payloadBase64', 'base64')
            ELSE convert_to(d->>'payload', 'UTF8') END;
