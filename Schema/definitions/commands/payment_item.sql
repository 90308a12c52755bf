-- A purchase or a renewal as the item ledger.record_payments takes: {"kind", "data"}, and its
-- "job" only when it brings one (ledger.apply_payments writes a job for an item that has the key).
CREATE OR REPLACE FUNCTION ledger.payment_item(c ledger.command)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN jsonb_build_object('kind', c.kind, 'data', c.data)
       || CASE WHEN c.job IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('job', c.job) END;
