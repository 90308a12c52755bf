-- Analytics count what docs/contract.md §3.2 calls entitled: a lineage is a subscriber at t when
-- ledger.subscriptions_at(t) says `entitled` (active or inGracePeriod). Renewal extensions,
-- reversed refunds and grace periods change access over time; project_range states each as
-- spans of time in ledger.entitled_spans (the rules are written there), kept for every lineage
-- an event touches, so that their union at t is exactly `entitled` at t.
--
-- Each lineage's entitled time as disjoint intervals, with what ended each, from those spans:
-- an interval is read at the last of its spans that starts by p_hi, whose row carries the
-- interval's start and its end so far. An interval ends by expiry when a span ends naturally at
-- its end, else by billing when a grace period's span does, else by a refund. The intervals
-- that end in [p_lo, p_hi) and start in (p_lo, p_hi] are exact, which is all the reports need;
-- one that started before p_lo may show an earlier start than the spans meeting the window
-- alone would give. (analytics.entitlement_spans, which a database of the first releases has
-- and which merged the spans that meet the window on every call, is dropped: project_range
-- keeps the spans.)
--
-- The two rules are functions of a span's values (analytics.access_window, analytics.access_end),
-- which access and analytics.churn inline: churn reads the spans itself, since on a distributed
-- ledger its endings look up each lineage's other rows by owner, which Citus cannot do from the
-- rows of a function (docs/scale-out.md).
DROP FUNCTION IF EXISTS analytics.entitlement_spans(timestamptz, timestamptz, boolean);

CREATE OR REPLACE FUNCTION analytics.access(p_lo timestamptz, p_hi timestamptz, p_include_sandbox boolean DEFAULT false)
RETURNS TABLE (store_code text, product_id text, original_transaction_id text, starts_at timestamptz,
               ends_at timestamptz, ended_by_refund boolean, ended_by_billing boolean)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT s.store_code, s.product_id, s.lineage_id, s.interval_start, s.ends_so_far,
       analytics.access_end(s.natural_end_so_far, s.billing_end_so_far, s.ends_so_far) = 'refund',
       analytics.access_end(s.natural_end_so_far, s.billing_end_so_far, s.ends_so_far) = 'billing'
  FROM ledger.entitled_spans s
 WHERE s.with_sandbox = p_include_sandbox
   AND analytics.access_window(s.starts_at, s.ends_so_far, s.next_start, p_lo, p_hi)
$$;
COMMENT ON FUNCTION analytics.access(timestamptz, timestamptz, boolean) IS 'Each lineage''s entitled time (docs/contract.md §3.2: active or inGracePeriod) as disjoint intervals [starts_at, ends_at) that meet [p_lo, p_hi], from ledger.entitled_spans (ends in [p_lo, p_hi) and starts in (p_lo, p_hi] are exact). ended_by_refund: a refund, not an expiry or a billing state, ended the interval; ended_by_billing: a grace period ended it (billing retry or another billing state).';
GRANT EXECUTE ON FUNCTION analytics.access(timestamptz, timestamptz, boolean) TO ledger_reader;
