import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// App Store Server Notifications V2 through the ledger (docs/contract.md §5.2), minted at test time.
@Suite("App Store notifications")
struct AppleNotificationTests {
    typealias M = AppleMint
    let mint = AppleMint()

    static let link = #"{"type":"accountLink","userId":"ua","storeCode":"AS","appAccountToken":"acct-1"}"#
    static let first = M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z")
    static let second = M.transaction("101", original: "100", purchase: "2026-04-01T00:00:00Z", expires: "2026-05-01T00:00:00Z")

    func subscriptions(_ c: Connection, at: String, user: String = "ua") throws -> [Subscription] {
        try Subscription.fetchAll(c, userId: user, at: Fixture.time(at), includeExpired: true)
    }

    func ingest(_ c: Connection, _ lines: [String]) throws -> [CommandOutcome] {
        try c.ingest(lines, stores: mint.stores)
    }

    @Test func aSubscriptionIsParkedUntilItsOwnerIsKnownThenApplied() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let out = try ingest(c, [mint.line(M.payload("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-1",
                                                             signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                                         Self.link])
                #expect(out.map(\.status) == [.parked, .recorded])
                #expect(out[0].notificationId == "n-1")
                let s = try #require(try subscriptions(c, at: "2026-03-15T00:00:00Z").first)
                #expect(s.originalTransactionId == "100" && s.status == .active && s.entitled && s.userId == "ua")
                #expect(s.productType == .autoRenewable && s.expiryTime == Fixture.time("2026-04-01T00:00:00Z"))
                #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
                // The price is Apple's milli-units, exactly.
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE price = 9.99 AND price::text = '9.99'") == 1)
            }
        }
    }

    /// A notified payment's event is built by `ledger.payment_event` in the shape the
    /// notification path always gave it: the transaction as the decoder read it (kept in the
    /// notification's event), the ledger's userId, productType and paymentSeq, and its source.
    @Test func aNotifiedPaymentsEventIsTheTransactionWithTheLedgersFields() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let out = try ingest(c, [Self.link, mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z",
                                                                         transaction: Self.first))])
                #expect(out.map(\.status) == [.recorded, .recorded])
                #expect(try c.count("""
                    SELECT count(*) FROM ledger.events p, ledger.events n
                     WHERE p.type = 'PurchaseRecorded' AND n.type = 'NotificationReceived'
                       AND p.data = n.data->'payment' || jsonb_build_object('userId', 'ua', 'productType', 'AUTO_RENEWABLE',
                                                                            'paymentSeq', '100', 'source', 'notification')
                    """) == 1)
            }
        }
    }

    @Test func aRenewalIsRecordedOnceByIdAndByFact() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let renew = mint.line(M.payload("DID_RENEW", uuid: "n-2", signed: "2026-04-01T00:00:00Z", transaction: Self.second))
                let out = try ingest(c, [
                    Self.link,
                    mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    renew, renew,
                    mint.line(M.payload("DID_RENEW", uuid: "n-9", signed: "2026-04-01T00:00:01Z", transaction: Self.second)),
                ])
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded, .duplicate, .duplicate])
                #expect(out[2].paymentSeq == "101" && out[4].paymentSeq == "101")
                // The SDK line for the same store transaction names the same payment.
                var sdk = Fixture.subscription("P-9", user: "ua", transaction: "101", original: "100",
                                               from: "2026-04-01T00:00:00Z", to: "2026-05-01T00:00:00Z")
                sdk.productId = "premium_month"
                sdk.price = "9.99"
                #expect(try c.run(.record(sdk, kind: .renewal)).status == .duplicate)
                #expect(try c.run(.record(sdk, kind: .renewal)).status == .duplicate)
                sdk.price = "1.99"
                #expect(try c.run(.record(sdk, kind: .renewal)).error?.code == .paymentConflict)
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 2)
                #expect(try c.count("SELECT count(*) FROM ledger.payment_aliases WHERE alias_seq = 'P-9' AND payment_seq = '101'") == 1)
                #expect(try subscriptions(c, at: "2026-04-15T00:00:00Z").first?.latestPaymentSeq == "101")
                // Looked up by the SDK's name, the payment answers with its own name and owner,
                // and no longer as known from the store alone (its token is linked).
                let byAlias = try #require(try PaymentRecord.fetch(c, .paymentSeq("P-9")))
                #expect(byAlias.payment.paymentSeq == "101" && byAlias.payment.userId == "ua" && !byAlias.fromStore)
                #expect(try PaymentRecord.fetch(c, .paymentSeq("101")) == byAlias)
                #expect(try PaymentRecord.fetch(c, .transaction(.appStore, "101")) == byAlias)
                #expect(try PaymentRecord.fetch(c, .paymentSeq("100"))?.fromStore == true)
                // The alias is the payment's user's, as the link's event is.
                let owners = try c.projectionOwnership()
                #expect(owners.values.allSatisfy { $0.strangers == 0 } && owners["payment_aliases"]?.rows == 1, "\(owners)")
            }
        }
    }

    @Test func autoRenewChangesTakeEffectAtTheirOwnTimeInAnyOrder() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let on = M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", uuid: "n-on",
                                   signed: "2026-03-20T00:00:00Z", transaction: Self.first)
                let off = M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "n-off",
                                    signed: "2026-03-10T00:00:00Z", transaction: Self.first)
                let out = try ingest(c, [Self.link,
                    mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    mint.line(on), mint.line(off)])  // the older one arrives last
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded, .recorded])
                #expect(try subscriptions(c, at: "2026-03-05T00:00:00Z").first?.autoRenewing == true)
                #expect(try subscriptions(c, at: "2026-03-15T00:00:00Z").first?.autoRenewing == false)
                #expect(try subscriptions(c, at: "2026-03-25T00:00:00Z").first?.autoRenewing == true)
                let owners = try c.projectionOwnership()
                #expect(owners.values.allSatisfy { $0.strangers == 0 } && owners["auto_renew_changes"]?.rows == 2, "\(owners)")
            }
        }
    }

    @Test func aGracePeriodEndsInBillingRetryAndARenewalEndsIt() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let grace = M.payload("DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: "n-g", signed: "2026-04-01T00:00:00Z",
                                      transaction: Self.first,
                                      renewal: M.renewal(original: "100", grace: "2026-04-08T00:00:00Z", signed: "2026-04-01T00:00:00Z"))
                let late = M.transaction("101", original: "100", purchase: "2026-04-12T00:00:00Z", expires: "2026-05-12T00:00:00Z")
                let out = try ingest(c, [Self.link,
                    mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    mint.line(grace),
                    mint.line(M.payload("DID_RENEW", subtype: "BILLING_RECOVERY", uuid: "n-r", signed: "2026-04-12T00:00:00Z", transaction: late))])
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded, .recorded])
                let inGrace = try #require(try subscriptions(c, at: "2026-04-03T00:00:00Z").first)
                #expect(inGrace.status == .inGracePeriod && inGrace.entitled)
                #expect(inGrace.gracePeriodExpiryTime == Fixture.time("2026-04-08T00:00:00Z"))
                #expect(try Subscription.fetchAll(c, userId: "ua", at: Fixture.time("2026-04-03T00:00:00Z")).count == 1)
                let retry = try #require(try subscriptions(c, at: "2026-04-10T00:00:00Z").first)
                #expect(retry.status == .billingRetry && !retry.entitled && retry.gracePeriodExpiryTime == nil)
                #expect(try Subscription.fetchAll(c, userId: "ua", at: Fixture.time("2026-04-10T00:00:00Z")).isEmpty)
                #expect(try subscriptions(c, at: "2026-04-15T00:00:00Z").first?.status == .active)
                let owners = try c.projectionOwnership()
                #expect(owners.values.allSatisfy { $0.strangers == 0 } && owners["billing_states"]?.rows == 1, "\(owners)")
            }
        }
    }

    @Test(arguments: [
        ("DID_FAIL_TO_RENEW", nil as String?, Subscription.Status.billingRetry),
        ("GRACE_PERIOD_EXPIRED", nil, .billingRetry),
        ("EXPIRED", "VOLUNTARY", .expired),
    ])
    func billingNotificationsSetTheStateAfterExpiry(type: String, subtype: String?, status: Subscription.Status) async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let out = try ingest(c, [Self.link,
                    mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    mint.line(M.payload("DID_FAIL_TO_RENEW", uuid: "n-f", signed: "2026-04-01T00:00:00Z", transaction: Self.first)),
                    mint.line(M.payload(type, subtype: subtype, uuid: "n-x", signed: "2026-04-05T00:00:00Z", transaction: Self.first))])
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded, .recorded])
                #expect(try subscriptions(c, at: "2026-04-03T00:00:00Z").first?.status == .billingRetry)
                #expect(try subscriptions(c, at: "2026-04-06T00:00:00Z").first?.status == status)
            }
        }
    }

    @Test func refundsReversalsAndRevocationsAreDatedByTheStore() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let refunded = M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z",
                                             extra: "\"revocationDate\":\(M.ms("2026-03-10T00:00:00Z")),\"revocationReason\":1")
                let other = M.transaction("200", original: "200", product: "vip", purchase: "2026-03-01T00:00:00Z",
                                          expires: "2026-04-01T00:00:00Z",
                                          extra: "\"revocationDate\":\(M.ms("2026-03-12T00:00:00Z"))")
                let out = try ingest(c, [Self.link,
                    mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    mint.line(M.payload("REFUND", uuid: "n-rf", signed: "2026-03-10T00:00:00Z", transaction: refunded)),
                    mint.line(M.payload("REFUND", uuid: "n-rf2", signed: "2026-03-10T00:00:01Z", transaction: refunded)),
                    mint.line(M.payload("REFUND_REVERSED", uuid: "n-rr", signed: "2026-03-20T00:00:00Z", transaction: refunded)),
                    mint.line(M.payload("REVOKE", uuid: "n-rv", signed: "2026-03-12T00:00:00Z", transaction: other))])
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded, .duplicate, .recorded, .recorded])
                #expect(try subscriptions(c, at: "2026-03-05T00:00:00Z").first { $0.originalTransactionId == "100" }?.status == .active)
                #expect(try subscriptions(c, at: "2026-03-15T00:00:00Z").first { $0.originalTransactionId == "100" }?.status == .revoked)
                #expect(try subscriptions(c, at: "2026-03-25T00:00:00Z").first { $0.originalTransactionId == "100" }?.status == .active)
                #expect(try subscriptions(c, at: "2026-03-15T00:00:00Z").first { $0.originalTransactionId == "200" }?.status == .revoked)
            }
        }
    }

    /// A refund, its reversal and a second refund: the window between the first refund and its
    /// reversal stays in the projections, live and when they are replayed from the log in one
    /// range, where the second refund is the stream's last word but not the only one.
    @Test func aSecondRefundKeepsTheReversedWindowLiveAndReplayed() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let refunded = M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z",
                                             extra: "\"revocationDate\":\(M.ms("2026-03-10T00:00:00Z")),\"revocationReason\":1")
                let again = M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z",
                                          extra: "\"revocationDate\":\(M.ms("2026-03-25T00:00:00Z")),\"revocationReason\":1")
                let out = try ingest(c, [Self.link,
                    mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    mint.line(M.payload("REFUND", uuid: "n-rf", signed: "2026-03-10T00:00:00Z", transaction: refunded)),
                    mint.line(M.payload("REFUND_REVERSED", uuid: "n-rr", signed: "2026-03-20T00:00:00Z", transaction: refunded)),
                    mint.line(M.payload("REFUND", uuid: "n-rf2", signed: "2026-03-25T00:00:00Z", transaction: again))])
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded, .recorded, .recorded])
                let statuses = { () throws -> [Subscription.Status?] in
                    try ["2026-03-05", "2026-03-15", "2026-03-22", "2026-03-28"].map {
                        try subscriptions(c, at: "\($0)T00:00:00Z").first?.status
                    }
                }
                let live = try statuses()
                #expect(live == [.active, .revoked, .active, .revoked])
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
                _ = try ProjectionRebuilder(connection: c).rebuild()
                #expect(try statuses() == live)
            }
        }
    }

    @Test func aRenewalExtensionMovesTheExpiryFromItsOwnTime() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let extended = M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-15T00:00:00Z")
                let out = try ingest(c, [Self.link,
                    mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    mint.line(M.payload("RENEWAL_EXTENDED", uuid: "n-e", signed: "2026-03-25T00:00:00Z", transaction: extended))])
                #expect(out.map(\.status) == [.recorded, .recorded, .recorded])
                #expect(try subscriptions(c, at: "2026-03-20T00:00:00Z").first?.expiryTime == Fixture.time("2026-04-01T00:00:00Z"))
                let later = try #require(try subscriptions(c, at: "2026-04-10T00:00:00Z").first)
                #expect(later.status == .active && later.expiryTime == Fixture.time("2026-04-15T00:00:00Z"))
            }
        }
    }

    @Test func notificationsWithoutEffectAreIgnoredAndKept() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let nonConsumable = M.transaction("300", original: "300", product: "sword", purchase: "2026-03-01T00:00:00Z",
                                                  type: "Non-Consumable")
                let out = try ingest(c, [
                    mint.line(M.payload("TEST", uuid: "n-t", signed: "2026-03-01T00:00:00Z")),
                    mint.line(M.payload("PRICE_INCREASE", subtype: "PENDING", uuid: "n-p", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    mint.line(M.payload("CONSUMPTION_REQUEST", uuid: "n-c", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    mint.line(M.payload("ONE_TIME_CHARGE", uuid: "n-nc", signed: "2026-03-01T00:00:00Z", transaction: nonConsumable))])
                #expect(out.map(\.status) == [.ignored, .ignored, .ignored, .ignored])
                #expect(out.map(\.notificationId) == ["n-t", "n-p", "n-c", "n-nc"])
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'NotificationReceived' AND data->'received' ? 'signedPayload'") == 4)
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 0)
            }
        }
    }

    @Test func aConsumableLearnedFromTheStoreIsConsumedWithoutAToken() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let coins = M.transaction("C-1", original: "C-1", product: "coins_100", purchase: "2026-03-01T00:00:00Z",
                                          type: "Consumable", price: 990)
                let out = try ingest(c, [Self.link, mint.line(M.payload("ONE_TIME_CHARGE", uuid: "n-c1", signed: "2026-03-01T00:00:00Z", transaction: coins))])
                #expect(out.map(\.status) == [.recorded, .recorded])
                #expect(try UnconsumedPayment.fetchAll(c, userId: "ua").map(\.paymentSeq) == ["C-1"])
                #expect(try c.run(.consume(paymentSeq: "C-1", userId: "ua", purchaseToken: "guess", time: nil)).error?.code == .tokenInvalid)
                // The SDK line for the same transaction gives it its paymentSeq and token.
                var sdk = Fixture.consumable("P-77", user: "ua")
                sdk.transactionId = "C-1"
                sdk.productId = "coins_100"
                sdk.price = "0.99"
                #expect(try c.run(.record(sdk, kind: .purchase)).status == .duplicate)
                #expect(try c.run(.consume(paymentSeq: "C-1", userId: "ua", purchaseToken: nil, time: nil)).error?.code == .tokenInvalid)
                #expect(try c.run(.consume(paymentSeq: "P-77", userId: "ua", purchaseToken: sdk.purchaseToken, time: nil)).status == .consumed)
                #expect(try c.run(.consume(paymentSeq: "C-1", userId: "ua", purchaseToken: sdk.purchaseToken, time: nil)).status == .alreadyConsumed)
                #expect(try UnconsumedPayment.fetchAll(c, userId: "ua").isEmpty)
            }
        }
    }

    @Test func aConsumableWithoutTokenConsumesOnceWithoutOne() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let coins = M.transaction("C-2", original: "C-2", product: "coins_100", purchase: "2026-03-01T00:00:00Z",
                                          type: "Consumable", price: 120000)
                _ = try ingest(c, [Self.link, mint.line(M.payload("ONE_TIME_CHARGE", uuid: "n-c2", signed: "2026-03-01T00:00:00Z", transaction: coins))])
                #expect(try UnconsumedPayment.fetchAll(c, userId: "ua").first?.price == "120")
                #expect(try c.ingest([#"{"type":"consume","userId":"ua","paymentSeq":"C-2"}"#]).first?.status == .consumed)
                #expect(try c.ingest([#"{"type":"consume","userId":"ua","paymentSeq":"C-2"}"#]).first?.status == .alreadyConsumed)
            }
        }
    }

    @Test func aProductLineDecidesTheTypeOfAnUnknownLineage() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let product = #"{"type":"product","storeCode":"AS","productId":"premium_month","productType":"CONSUMABLE_AUTO_RENEWABLE"}"#
                let out = try ingest(c, [product, product, Self.link,
                    mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first)),
                    #"{"type":"product","storeCode":"AS","productId":"premium_month","productType":"AUTO_RENEWABLE"}"#,
                    #"{"type":"accountLink","userId":"ub","storeCode":"AS","appAccountToken":"acct-1"}"#])
                #expect(out.map(\.status) == [.recorded, .duplicate, .recorded, .recorded, .rejected, .rejected])
                #expect(out[4].error?.code == .productInvalid && out[5].error?.code == .userInvalid)
                #expect(try subscriptions(c, at: "2026-03-15T00:00:00Z").first?.productType == .consumableAutoRenewable)
                #expect(try UnconsumedPayment.fetchAll(c, userId: "ua").map(\.paymentSeq) == ["100"])
            }
        }
    }

    @Test func aBackendHandsApplesBodyToTheLibraryAsIs() async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2, stores: mint.stores)
            let jws = mint.chain.signNested(M.payload("TEST", uuid: "n-t", signed: "2026-03-01T00:00:00Z"))
            let body = Array(#"{"signedPayload":"\#(jws)"}"#.utf8)
            let outcome = try await ledger.receiveStoreNotification(body)
            #expect(outcome.status == .ignored && outcome.notificationId == "n-t")
            #expect(try await ledger.receiveStoreNotification(body).status == .duplicate)
            let forgedJWS = TestAppleChain().signNested(M.payload("TEST", uuid: "n-f", signed: "2026-03-01T00:00:00Z"))
            let forged = Array(#"{"signedPayload":"\#(forgedJWS)"}"#.utf8)
            #expect(try await ledger.receiveStoreNotification(forged).error?.code == .signatureInvalid)
            #expect(try await ledger.receiveStoreNotification(Array(#"{"type":"purchase"}"#.utf8)).error?.code == .invalidInput)
            await ledger.close()
        }
    }

    @Test func sixtyFourConcurrentDeliveriesOfOneNotificationRecordItOnce() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in _ = try ingest(c, [Self.link]) }
            let command = try mint.command(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: Self.first))
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 16)
            let statuses = try await withThrowingTaskGroup(of: CommandOutcome.Status.self) { group in
                for _ in 0..<64 { group.addTask { try await ledger.execute(command).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            await ledger.close()
            #expect(statuses.filter { $0 == .recorded }.count == 1)
            #expect(statuses.filter { $0 == .duplicate }.count == 63)
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'NotificationReceived'") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 1)
            }
        }
    }
}
