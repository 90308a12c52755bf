-- A user's history (GET /v1/users/{userId}/history, `ledger history`): every event about the
-- user's payments, subscription lineages, restores, account links and store notifications, the
-- latest p_limit of them in time order (occurred_at, then position). Each row carries the change
-- the event made (`change`, machine-readable) and a one-line summary for people; an event that
-- caused jobs (ledger.jobs.caused_by) has one row per job, in job id order, and one row with
-- null job columns otherwise. Purchase tokens and their digests are never returned.
--
-- Which events are the user's:
--   * those the user owns (ledger.events.user_id, written by ledger.append; the first column of
--     the log's primary key, 0015_log_owner_keys.sql):
--     every payment event, lineage events, restores, account links, notification releases, and
--     the store notifications applied to the user or asking about a payment of theirs;
--   * the store notifications (NotificationReceived) that one of those names: a lineage event's
--     notificationId, a release's own stream (a notification parked, then released to the user);
--   * the notification whose job learned one of those notifications' payment (a learned
--     payment's id is the asking notification's id, '/', and the API: GoogleAnswers.swift).
-- A notification that changed nothing of the user's (ignored, a duplicate) is not found.
--
-- SECURITY DEFINER: a ledger_writer login may ask too, and only ledger_reader may read jobs.
-- PL/pgSQL, not SQL: on a Citus cluster no statement reads a distributed table through a
-- SQL-language function (docs/scale-out.md). Under custom plans: there the user, a constant,
-- names the shard of the user's own events, and on one server each call is planned for its user,
-- where a SQL function inlined into a caller's prepared statement runs under that statement's
-- generic plan (1,070 against 700 histories a second; BENCHMARKS.md, "Sets and queries on a
-- distributed ledger"). A database made before holds it as a SQL function, which CREATE OR
-- REPLACE replaces in place (the result is the same).
CREATE OR REPLACE FUNCTION ledger.user_history(p_user_id text, p_limit integer)
RETURNS TABLE (event_position bigint, occurred_at timestamptz, recorded_at timestamptz, stream text, type text,
               change text, summary text, store_code text, payment_seq text, original_transaction_id text,
               notification_id text, job_id bigint, job_kind text, job_state text, job_outcome text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan AS $$
BEGIN
RETURN QUERY
WITH own AS MATERIALIZED (
    SELECT e.position, e.occurred_at, e.recorded_at, e.stream, e.type, e.data, e.tx
      FROM ledger.events e
     WHERE e.user_id = p_user_id
       AND e.user_id <> ''   -- the facts without a user are ''s; no user is ''
),
named AS MATERIALIZED (
    SELECT n.position, n.occurred_at, n.recorded_at, n.stream, n.type, n.data, n.tx
      FROM ledger.events n
     WHERE n.type = 'NotificationReceived'
       AND n.stream IN (SELECT CASE WHEN o.type = 'NotificationReleased' THEN o.stream
                                    ELSE 'notification:' || (o.data->>'storeCode') || ':' || (o.data->>'notificationId') END
                          FROM own o
                         WHERE o.data ? 'notificationId' AND o.type <> 'NotificationReceived')
),
asked AS (
    SELECT n.position, n.occurred_at, n.recorded_at, n.stream, n.type, n.data, n.tx
      FROM ledger.events n
     WHERE n.type = 'NotificationReceived'
       AND n.stream IN (SELECT 'notification:GG:' || left(l.data->>'notificationId', -length('/' || (l.data->>'notificationType')))
                          FROM (SELECT * FROM own UNION ALL SELECT * FROM named) l
                         WHERE l.type = 'NotificationReceived' AND l.data->>'effect' = 'learnedPayment'
                           AND l.data->>'notificationId' LIKE '%/' || (l.data->>'notificationType'))
),
latest AS (
    SELECT * FROM (SELECT * FROM own UNION SELECT * FROM named UNION SELECT * FROM asked) a
     ORDER BY a.occurred_at DESC, a.position DESC
     LIMIT p_limit
)
SELECT e.position, e.occurred_at, e.recorded_at, e.stream, e.type,
       CASE e.type
            WHEN 'PurchaseRecorded' THEN 'recorded'
            WHEN 'RenewalRecorded' THEN 'renewed'
            WHEN 'PaymentConsumed' THEN 'consumed'
            WHEN 'PaymentRefunded' THEN 'refunded'
            WHEN 'RefundReversed' THEN 'refundReversed'
            WHEN 'ExpiryExtended' THEN 'expiryExtended'
            WHEN 'PaymentLinked' THEN 'linked'
            WHEN 'AutoRenewCancelled' THEN 'autoRenewCancelled'
            WHEN 'AutoRenewEnabled' THEN 'autoRenewEnabled'
            WHEN 'BillingStateChanged' THEN 'billingState:' || (e.data->>'state')
            WHEN 'PurchasesRestored' THEN 'restored'
            WHEN 'AccountLinked' THEN 'accountLinked'
            WHEN 'NotificationReceived' THEN 'notification:' || (e.data->>'outcome')
            WHEN 'NotificationReleased' THEN 'released'
            ELSE e.type END,
       CASE e.type
            WHEN 'PurchaseRecorded' THEN format('%s bought %s (%s) for %s %s, transaction %s', e.data->>'paymentSeq',
                 e.data->>'productId', e.data->>'productType', e.data->>'price', e.data->>'currency', e.data->>'transactionId')
                 || coalesce(', expires ' || ledger.history_time(e.data->>'expiryTime'), '')
            WHEN 'RenewalRecorded' THEN format('%s renewed %s for %s %s, transaction %s', e.data->>'paymentSeq',
                 e.data->>'productId', e.data->>'price', e.data->>'currency', e.data->>'transactionId')
                 || coalesce(', expires ' || ledger.history_time(e.data->>'expiryTime'), '')
            WHEN 'PaymentConsumed' THEN format('%s consumed: goods handed out', e.data->>'paymentSeq')
            WHEN 'PaymentRefunded' THEN format('%s refunded', e.data->>'paymentSeq') || coalesce(' (' || (e.data->>'reason') || ')', '')
            WHEN 'RefundReversed' THEN format('%s: its refund reversed', e.data->>'paymentSeq')
            WHEN 'ExpiryExtended' THEN format('%s extended to %s', e.data->>'paymentSeq', ledger.history_time(e.data->>'expiryTime'))
            WHEN 'PaymentLinked' THEN format('%s named %s by the backend', e.data->>'paymentSeq', e.data->>'alias')
            WHEN 'AutoRenewCancelled' THEN format('subscription %s: auto-renew off', e.data->>'originalTransactionId')
            WHEN 'AutoRenewEnabled' THEN format('subscription %s: auto-renew on', e.data->>'originalTransactionId')
            WHEN 'BillingStateChanged' THEN format('subscription %s: billing state %s', e.data->>'originalTransactionId', e.data->>'state')
                 || coalesce(', grace period until ' || ledger.history_time(e.data->>'gracePeriodExpiresAt'), '')
            WHEN 'PurchasesRestored' THEN format('restore: %s of %s payments recorded',
                 jsonb_array_length(coalesce(e.data->'recorded', '[]')), jsonb_array_length(coalesce(e.data->'items', '[]')))
            WHEN 'AccountLinked' THEN format('account %s linked', e.data->>'appAccountToken')
            WHEN 'NotificationReceived' THEN format('%s notification %s (%s): %s', e.data->>'storeCode',
                 e.data->>'notificationType', e.data->>'effect', e.data->>'outcome')
            WHEN 'NotificationReleased' THEN 'parked notification applied, its owner known'
            ELSE e.type END,
       e.data->>'storeCode', e.data->>'paymentSeq', e.data->>'originalTransactionId', e.data->>'notificationId',
       j.id, j.kind, j.state, j.outcome
  FROM latest e
  LEFT JOIN ledger.jobs j ON j.caused_by = e.position
 ORDER BY e.occurred_at, e.position, j.id;
END
$$;
REVOKE ALL ON FUNCTION ledger.user_history(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.user_history(text, integer) TO ledger_reader, ledger_writer;
