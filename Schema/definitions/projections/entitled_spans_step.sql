-- How <schema>.entitled_spans is kept (issue #13, item 5): every lineage whose payments or
-- billing states the events changed gets its entitled spans computed again from the projection
-- tables, once per sandbox scope, so that an append, a batch and a rebuild keep them alike
-- (analytics.access reads them).
--   * ledger.entitled_spans_step(target, predicate) (this file) is the text that
--     ledger.install_project_range puts into the one body of project_range and
--     project_positions (as %7$s), with the same event predicate (%2$s): it finds the lineages the
--     events touched and defers them to the end of the transaction (ledger.defer_spans). It
--     reads the body's `types` and `subscriptions`; its own variables are declared in a block
--     of its own.
--   * ledger.settle_spans(schema) hands the lineages a transaction deferred to
--     <schema>.refresh_spans(stores, lineages), which computes their spans again: the one
--     definition of the spans (install_entitled_spans.sql makes it per schema). The commit
--     calls it (the deferred constraint trigger of ledger.spans_settle,
--     settle_spans_at_commit.sql), in the same transaction: a failure there fails the commit,
--     so the spans never lag behind the payments they come from. A replay calls it once at its
--     end (ShadowReplay, ledger.project_unseen) before it compares or swaps the tables.
--   * So a lineage whose renewals or refunds run in several rounds of a batch, or in several
--     ranges of a replay, is computed once, where it was computed once per round or range
--     (BENCHMARKS.md, "Spans once per transaction"). Nothing reads the spans between a
--     command's rounds: they are for the analytics, which read committed data.
--   * The same deferral keeps <schema>.lineage_states (install_lineage_states.sql), which
--     ledger.subscriptions_at reads: each lineage is deferred with the earliest instant its
--     events changed, and settle_spans hands them to <schema>.refresh_states too. An auto-renew
--     change defers its lineage for the states only. The library's queries read committed
--     data; SQL that reads ledger.subscriptions_at inside its own writing transaction calls
--     ledger.settle_spans('ledger') first.
CREATE OR REPLACE FUNCTION ledger.entitled_spans_step(target text, predicate text)
RETURNS text
LANGUAGE sql STABLE AS $step$
SELECT format($sql$
            DECLARE
                span_stores   text[];
                span_lineages text[];
                span_since    timestamptz[];
                span_flags    boolean[];
            BEGIN
            IF subscriptions OR types && ARRAY['PaymentRefunded', 'RefundReversed', 'ExpiryExtended', 'BillingStateChanged',
                                               'AutoRenewCancelled', 'AutoRenewEnabled'] THEN
                -- Each lineage with the earliest instant the events changed (a payment counts
                -- from its purchase time; a billing or auto-renew change from its own time) and
                -- whether its spans change (not for an auto-renew change alone).
                SELECT coalesce(array_agg(t.store_code), '{}'), coalesce(array_agg(t.lineage_id), '{}'),
                       coalesce(array_agg(t.since), '{}'), coalesce(array_agg(t.spans), '{}')
                  INTO span_stores, span_lineages, span_since, span_flags
                  FROM (SELECT e.data->>'storeCode' AS store_code,
                               coalesce(e.data->>'originalTransactionId', e.data->>'transactionId') AS lineage_id,
                               (e.data->>'purchaseTime')::timestamptz AS since, true AS spans
                          FROM ledger.events e
                         WHERE %2$s
                           AND e.type IN ('PurchaseRecorded', 'RenewalRecorded')
                           AND e.data->>'productType' <> 'CONSUMABLE'
                        UNION ALL
                        SELECT p.store_code, p.lineage_id, p.purchase_time, true
                          FROM ledger.events e
                          JOIN %1$I.payments p ON p.payment_seq = e.data->>'paymentSeq'
                         WHERE %2$s
                           AND e.type IN ('PaymentRefunded', 'RefundReversed', 'ExpiryExtended')
                           AND p.lineage_id IS NOT NULL
                        UNION ALL
                        SELECT e.data->>'storeCode', e.data->>'originalTransactionId', e.occurred_at,
                               e.type = 'BillingStateChanged'
                          FROM ledger.events e
                         WHERE %2$s AND e.type IN ('BillingStateChanged', 'AutoRenewCancelled', 'AutoRenewEnabled')) t;

                %3$s
            END IF;
            END;
$sql$, target, predicate,
       format('PERFORM ledger.defer_spans(%L, span_stores, span_lineages, span_since, span_flags);', target))
$step$;
REVOKE ALL ON FUNCTION ledger.entitled_spans_step(text, text) FROM PUBLIC;

