import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

extension LedgerServerTests {
    /// `GET /v1/users/{userId}/history`: every event about a user's payments, subscriptions,
    /// account links and store notifications, in time order, with what each changed.
    @Suite("ledger serve: a user's history")
    struct HistoryRouteTests {
        typealias M = AppleMint
        static var mint: AppleMint { AppleMint(chain: StoreMint.chain) }
        static let first = M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z")
        static let second = M.transaction("101", original: "100", purchase: "2026-04-01T00:00:00Z", expires: "2026-05-01T00:00:00Z")

        /// u1: two consumables (one consumed, one refunded), an account link and a subscription
        /// that renews, loses auto-renew and enters a grace period; u2: one purchase.
        static let lines = [
            Fixture.purchaseLine(["paymentSeq": "\"P-1\""]),
            Fixture.purchaseLine(["paymentSeq": "\"P-2\"", "transactionId": "\"T-2\"", "purchaseToken": "\"tok-2\"",
                                  "purchaseTime": "\"2026-01-02T00:00:00Z\""]),
            Fixture.purchaseLine(["paymentSeq": "\"P-9\"", "userId": "\"u2\"", "transactionId": "\"T-9\"", "purchaseToken": "\"tok-9\""]),
            #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1","time":"2026-01-03T00:00:00Z"}"#,
            #"{"type":"refund","paymentSeq":"P-2","time":"2026-01-04T00:00:00Z","reason":"chargeback"}"#,
            #"{"type":"accountLink","userId":"u1","storeCode":"AS","appAccountToken":"acct-1"}"#,
            mint.line(M.payload("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: first)),
            mint.line(M.payload("DID_RENEW", uuid: "n-2", signed: "2026-04-01T00:00:00Z", transaction: second)),
            #"{"type":"cancel","storeCode":"AS","originalTransactionId":"100","time":"2026-04-15T00:00:00Z"}"#,
            mint.line(M.payload("DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: "n-g", signed: "2026-05-01T00:00:00Z",
                                transaction: second,
                                renewal: M.renewal(original: "100", grace: "2026-05-08T00:00:00Z", signed: "2026-05-01T00:00:00Z"))),
        ]

        static func ingest(_ server: ServerHarness) throws {
            let outcomes = try server.database.withConnection { try $0.ingest(Self.lines, stores: Self.mint.stores) }
            try #require(outcomes.allSatisfy { $0.status != .rejected && $0.status != .parked }, "\(outcomes)")
        }

        static func entries(_ reply: Reply) -> [[String: Any]] {
            reply.json["entries"] as? [[String: Any]] ?? []
        }

        static func time(_ entry: [String: Any]) throws -> Date {
            try #require(Timestamp.parseISO8601(entry["occurredAt"] as? String ?? "")).date
        }

        @Test func theHistoryListsTheUsersEventsInTimeOrderWithWhatEachChanged() async throws {
            try await ServerHarness.with { server in
                try Self.ingest(server)
                let reply = try await server.send("GET", "/v1/users/u1/history", key: try server.key(.reader))
                #expect(reply.status == 200, "\(reply.text)")
                #expect(reply.json["truncated"] as? Bool == false)
                let entries = Self.entries(reply)
                #expect(entries.map { $0["change"] as? String } == [
                    "recorded", "recorded", "consumed", "refunded",
                    "recorded", "notification:applied", "renewed", "notification:applied", "autoRenewCancelled",
                    "billingState:inGracePeriod", "notification:applied", "accountLinked",
                ], "\(reply.text)")
                #expect(entries.prefix(4).map { $0["paymentSeq"] as? String } == ["P-1", "P-2", "P-1", "P-2"])
                #expect(entries.compactMap { $0["notificationId"] as? String } == ["n-1", "n-2", "n-g", "n-g"])
                #expect(entries[3]["summary"] as? String == "P-2 refunded (chargeback)")
                #expect(entries[9]["summary"] as? String == "subscription 100: billing state inGracePeriod, grace period until 2026-05-08T00:00:00.000Z")
                // In time order, then by position; the other user's payment is not there.
                let order = try entries.map { (try Self.time($0), $0["position"] as? Int ?? 0) }
                #expect(zip(order, order.dropFirst()).allSatisfy { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) })
                #expect(!reply.text.contains("P-9") && !reply.text.contains("u2"))
                // Never a purchase token nor its digest.
                #expect(!reply.text.contains("tok-") && !reply.text.contains("Sha256"))

                let writer = try await server.send("GET", "/v1/users/u1/history", key: try server.key(.writer))
                #expect(writer.status == 200 && writer.text == reply.text)
                let other = try await server.send("GET", "/v1/users/u2/history", key: try server.key(.reader))
                #expect(Self.entries(other).map { $0["paymentSeq"] as? String } == ["P-9"])
            }
        }

        /// Each entry's change is what the queries answer at its instant: the subscriptions query
        /// (ledger.subscriptions_at) for a subscription's changes, the payment's own record for a
        /// consumable's; a billing state or a cancel also differs from the moment before.
        @Test func eachEntrysChangeIsWhatTheQueriesSayAtItsInstant() async throws {
            try await ServerHarness.with { server in
                try Self.ingest(server)
                let reply = try await server.send("GET", "/v1/users/u1/history", key: try server.key(.reader))
                try #require(reply.status == 200)
                let entries = Self.entries(reply)
                try #require(entries.count == 12)
                try server.database.withConnection { c in
                    func subscription(at instant: Date) throws -> Subscription? {
                        try Subscription.fetchAll(c, userId: "u1", at: instant, includeExpired: true).first { $0.originalTransactionId == "100" }
                    }
                    func payment(_ seq: String?) throws -> PaymentRecord {
                        let seq = try #require(seq)
                        return try #require(try PaymentRecord.fetch(c, .paymentSeq(seq)))
                    }
                    let unconsumed = try UnconsumedPayment.fetchAll(c, userId: "u1").map(\.paymentSeq)
                    for (index, entry) in entries.enumerated() {
                        let change = entry["change"] as? String ?? ""
                        let seq = entry["paymentSeq"] as? String
                        let at = try Self.time(entry)
                        let before = at.addingTimeInterval(-1)
                        switch change {
                        case "recorded" where entry["storeCode"] as? String == "AS" && seq == "100", "renewed":
                            let s = try #require(try subscription(at: at))
                            #expect(s.latestPaymentSeq == seq && s.status == .active, "\(change) \(s)")
                        case "recorded":
                            #expect(try payment(seq).payment.purchaseTime == at)
                        case "consumed":
                            #expect(try payment(seq).consumedAt == at)
                        case "refunded":
                            #expect(try payment(seq).refundedAt == at && !unconsumed.contains(seq ?? ""))
                        case "autoRenewCancelled":
                            #expect(try subscription(at: before)?.autoRenewing == true)
                            #expect(try subscription(at: at)?.autoRenewing == false)
                        case let billing where billing.hasPrefix("billingState:"):
                            let state = String(billing.dropFirst("billingState:".count))
                            #expect(try subscription(at: at)?.status.rawValue == state)
                            #expect(try subscription(at: before)?.status.rawValue != state)
                        case "notification:applied":
                            // Its effect is the entry just before it, at its instant (signedDate).
                            #expect(entry["notificationId"] is String)
                            let effect = try Self.time(entries[max(index - 1, 0)])
                            #expect(index > 0 && effect == at)
                        case "accountLinked":
                            #expect(entry["storeCode"] as? String == "AS")
                        default:
                            Issue.record("no check for the change \(change)")
                        }
                    }
                }
            }
        }

        /// A notification parked while its owner was unknown is the user's once an account link
        /// releases it: the notification (parked), what it recorded, the link and the release.
        @Test func aParkedNotificationIsTheUsersOnceReleased() async throws {
            try await ServerHarness.with { server in
                let mint = Self.mint
                let parked = try server.database.withConnection {
                    try $0.ingest([mint.line(M.payload("SUBSCRIBED", uuid: "n-p", signed: "2026-03-01T00:00:00Z",
                                                       transaction: M.transaction("200", original: "200", purchase: "2026-03-01T00:00:00Z",
                                                                                  expires: "2026-04-01T00:00:00Z", account: "acct-3")))],
                                  stores: mint.stores)
                }
                try #require(parked.map(\.status) == [.parked])
                let reader = try server.key(.reader)
                #expect(Self.entries(try await server.send("GET", "/v1/users/u3/history", key: reader)).isEmpty)
                _ = try server.database.withConnection {
                    try $0.ingest([#"{"type":"accountLink","userId":"u3","storeCode":"AS","appAccountToken":"acct-3"}"#])
                }
                let reply = try await server.send("GET", "/v1/users/u3/history", key: reader)
                let entries = Self.entries(reply)
                #expect(entries.map { $0["change"] as? String } == ["notification:parked", "recorded", "accountLinked", "released"],
                        "\(reply.text)")
                #expect(entries.map { $0["notificationId"] as? String } == ["n-p", nil, nil, "n-p"])
            }
        }

        @Test func anUnknownUserHasAnEmptyHistoryAndTheLimitKeepsTheLatest() async throws {
            try await ServerHarness.with { server in
                try Self.ingest(server)
                let reader = try server.key(.reader)
                let unknown = try await server.send("GET", "/v1/users/nobody/history", key: reader)
                #expect(unknown.status == 200 && unknown.text == #"{"entries":[],"truncated":false}"#, "\(unknown.text)")
                let all = Self.entries(try await server.send("GET", "/v1/users/u1/history", key: reader))
                let two = try await server.send("GET", "/v1/users/u1/history?limit=2", key: reader)
                #expect(two.json["truncated"] as? Bool == true)
                #expect(Self.entries(two).map { $0["position"] as? Int } == all.suffix(2).map { $0["position"] as? Int })
                let exact = try await server.send("GET", "/v1/users/u1/history?limit=\(all.count)", key: reader)
                #expect(exact.json["truncated"] as? Bool == false && Self.entries(exact).count == all.count)
            }
        }

        /// Ids a path cannot carry decoded are UserIdPathTests'.
        @Test(arguments: [("/v1/users/\(String(repeating: "x", count: 129))/history", "userId"),
                          ("/v1/users/u1/history?limit=0", "limit"), ("/v1/users/u1/history?limit=10001", "limit"),
                          ("/v1/users/u1/history?limit=x", "limit")])
        func aBadUserIdOrLimitIs400NamingIt(path: String, field: String) async throws {
            try await ServerHarness.with { server in
                let reply = try await server.send("GET", path, key: try server.key(.reader))
                #expect(reply.status == 400 && reply.code == "INVALID_INPUT", "\(reply.text)")
                #expect(reply.message.hasPrefix(field + ":"), "\(reply.message)")
            }
        }

        @Test func withoutAKeyIs401() async throws {
            try await ServerHarness.with { server in
                let reply = try await server.send("GET", "/v1/users/u1/history")
                #expect(reply.status == 401)
            }
        }
    }
}
