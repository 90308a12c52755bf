-- The events of every kind that `ledger demo` does not write (a product declared, an account
-- linked, a billing state, auto-renew turned on and off, a refund reversed, an expiry extended,
-- an alias, a notification parked and released, one applied), in order: a query whose rows
-- citus_check_distributed_projection (citus.sh) appends and projects after a demo, one
-- transaction each, as the commands do, so that the projection of every kind of event is
-- compared between one server's tables and the distributed ones.
-- Each: its stream, type, data, time and owner (the user, or '' for a fact without one).
SELECT stream, type, data, at, owner FROM (VALUES
 (1, 'product:GG:gems', 'ProductDeclared', '{"storeCode":"GG","productId":"gems","productType":"CONSUMABLE","price":"1.99","currency":"USD"}', '2026-10-01T00:00:00Z', ''),
 (2, 'account:AS:tok-1', 'AccountLinked', '{"storeCode":"AS","appAccountToken":"tok-1","userId":"u-x"}', '2026-10-01T00:00:01Z', 'u-x'),
 (3, 'payment:x-1', 'PurchaseRecorded', '{"userId":"u-x","storeCode":"AS","productId":"premium_month","productType":"AUTO_RENEWABLE","price":"9.99","currency":"USD","paymentSeq":"x-1","transactionId":"x-tx-1","purchaseTime":"2026-10-01T12:00:00Z","expiryTime":"2026-10-31T12:00:00Z","sandboxPayment":false,"promotionPayment":false,"purchaseTokenSha256":"aa01"}', '2026-10-01T12:00:00Z', 'u-x'),
 (4, 'lineage:AS:x-tx-1', 'BillingStateChanged', '{"storeCode":"AS","originalTransactionId":"x-tx-1","userId":"u-x","state":"inGracePeriod","gracePeriodExpiresAt":"2026-11-07T12:00:00Z"}', '2026-10-31T12:00:00Z', 'u-x'),
 (5, 'lineage:AS:x-tx-1', 'AutoRenewEnabled', '{"storeCode":"AS","originalTransactionId":"x-tx-1","userId":"u-x"}', '2026-10-31T13:00:00Z', 'u-x'),
 (6, 'payment:x-2', 'RenewalRecorded', '{"userId":"u-x","storeCode":"AS","productId":"premium_month","productType":"AUTO_RENEWABLE","price":"9.99","currency":"USD","paymentSeq":"x-2","transactionId":"x-tx-2","originalTransactionId":"x-tx-1","purchaseTime":"2026-11-02T12:00:00Z","expiryTime":"2026-12-02T12:00:00Z","sandboxPayment":false,"promotionPayment":false,"purchaseTokenSha256":"aa02"}', '2026-11-02T12:00:00Z', 'u-x'),
 (7, 'payment:x-2', 'PaymentRefunded', '{"paymentSeq":"x-2","userId":"u-x","reason":"refund"}', '2026-11-05T12:00:00Z', 'u-x'),
 (8, 'payment:x-2', 'RefundReversed', '{"paymentSeq":"x-2","userId":"u-x"}', '2026-11-06T12:00:00Z', 'u-x'),
 (9, 'payment:x-2', 'ExpiryExtended', '{"paymentSeq":"x-2","userId":"u-x","expiryTime":"2026-12-12T12:00:00Z"}', '2026-11-07T12:00:00Z', 'u-x'),
 (10, 'payment:x-2', 'PaymentLinked', '{"paymentSeq":"x-2","userId":"u-x","alias":"x-2-sdk","purchaseTokenSha256":"aa03"}', '2026-11-08T12:00:00Z', 'u-x'),
 (11, 'notification:GG:n-1', 'NotificationReceived', '{"storeCode":"GG","notificationId":"n-1","notificationType":"SUBSCRIPTION_RENEWED","effect":"renewal","outcome":"parked","originalTransactionId":"GPA.x-9","transactionId":"GPA.x-9..0"}', '2026-11-09T12:00:00Z', ''),
 (12, 'notification:GG:n-1', 'NotificationReleased', '{"storeCode":"GG","notificationId":"n-1","userId":"u-y"}', '2026-11-09T13:00:00Z', 'u-y'),
 (13, 'notification:AS:n-2', 'NotificationReceived', '{"storeCode":"AS","notificationId":"n-2","notificationType":"DID_CHANGE_RENEWAL_STATUS","effect":"autoRenewOff","outcome":"applied","originalTransactionId":"x-tx-1","transactionId":"x-tx-2"}', '2026-11-10T12:00:00Z', 'u-x'),
 (14, 'lineage:AS:x-tx-1', 'AutoRenewCancelled', '{"storeCode":"AS","originalTransactionId":"x-tx-1","userId":"u-x","notificationId":"n-2"}', '2026-11-10T12:00:00Z', 'u-x')
) AS more_events (n, stream, type, data, at, owner) ORDER BY n
