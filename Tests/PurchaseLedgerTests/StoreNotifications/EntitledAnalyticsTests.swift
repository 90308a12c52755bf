import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Analytics over what the stores' notifications add: subscribers are the lineages
/// `subscriptions` calls entitled (active or in a grace period), at every instant, and a grace
/// period that ends in billing retry is involuntary churn.
@Suite("Analytics of entitled subscriptions")
struct EntitledAnalyticsTests {
    typealias M = AppleMint

    /// Lineages with one history each, each its own product so that churn can be told apart.
    static func histories(_ mint: AppleMint) -> [String] {
        func tx(_ k: String, _ n: Int, _ from: String, _ to: String, extra: String = "") -> String {
            M.transaction("\(k)0\(n)", original: "\(k)00", product: "p-\(k)", purchase: from, expires: to,
                          account: "acct-\(k)", extra: extra)
        }
        func subscribed(_ k: String) -> String {
            M.payload("SUBSCRIBED", uuid: "\(k)-1", signed: "2026-03-01T00:00:00Z",
                      transaction: tx(k, 0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"))
        }
        func grace(_ k: String) -> String {
            M.payload("DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: "\(k)-g", signed: "2026-04-01T00:00:00Z",
                      transaction: tx(k, 0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"),
                      renewal: M.renewal(original: "\(k)00", grace: "2026-04-08T00:00:00Z", signed: "2026-04-01T00:00:00Z"))
        }
        let refunded = "\"revocationDate\":\(M.ms("2026-03-10T00:00:00Z"))"
        let payloads = [
            // g: a grace period that runs out: entitled until Apr 8, then billing retry.
            subscribed("g"), grace("g"),
            // r: recovered in its grace period: entitled on until the recovery's expiry.
            subscribed("r"), grace("r"),
            M.payload("DID_RENEW", subtype: "BILLING_RECOVERY", uuid: "r-2", signed: "2026-04-05T00:00:00Z",
                      transaction: tx("r", 1, "2026-04-05T00:00:00Z", "2026-05-05T00:00:00Z")),
            // v: the user turned auto-renew off.
            subscribed("v"),
            M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "v-2", signed: "2026-03-10T00:00:00Z",
                      transaction: tx("v", 0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")),
            // x: extended before it expired; y: extended after it had lapsed.
            subscribed("x"),
            M.payload("RENEWAL_EXTENDED", uuid: "x-2", signed: "2026-03-25T00:00:00Z",
                      transaction: tx("x", 0, "2026-03-01T00:00:00Z", "2026-04-15T00:00:00Z")),
            subscribed("y"),
            M.payload("RENEWAL_EXTENDED", uuid: "y-2", signed: "2026-04-05T00:00:00Z",
                      transaction: tx("y", 0, "2026-03-01T00:00:00Z", "2026-04-20T00:00:00Z")),
            // f: refunded on Mar 10, the refund reversed on Mar 20.
            subscribed("f"),
            M.payload("REFUND", uuid: "f-2", signed: "2026-03-10T00:00:00Z",
                      transaction: tx("f", 0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z", extra: refunded)),
            M.payload("REFUND_REVERSED", uuid: "f-3", signed: "2026-03-20T00:00:00Z",
                      transaction: tx("f", 0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")),
            // b: billing retry with no grace period.
            subscribed("b"),
            M.payload("DID_FAIL_TO_RENEW", uuid: "b-2", signed: "2026-04-01T00:00:00Z",
                      transaction: tx("b", 0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")),
        ]
        let links = ["g", "r", "v", "x", "y", "f", "b"].map {
            #"{"type":"accountLink","userId":"u-\#($0)","storeCode":"AS","appAccountToken":"acct-\#($0)"}"#
        }
        return links + payloads.map(mint.line)
    }

    static func load(_ c: Connection) throws {
        let mint = AppleMint()
        let outcomes = try c.ingest(histories(mint) + NotificationOrderTests.history("h", mint)
                                    + [#"{"type":"accountLink","userId":"u-h","storeCode":"AS","appAccountToken":"acct-h"}"#],
                                    stores: mint.stores)
        #expect(!outcomes.contains { $0.status == .rejected }, "\(outcomes)")
        #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
    }

    /// The entitled intervals of analytics.access hold exactly the lineages that
    /// ledger.subscriptions_at calls entitled, every six hours over four months: the edges of
    /// every grace period, extension, refund and reversal above fall on the grid.
    @Test func accessIsEntitlementAtEveryInstant() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try Self.load(c)
                let row = try c.query("""
                    WITH grid AS (
                        SELECT generate_series('2026-02-25T00:00:00Z'::timestamptz, '2026-07-01T00:00:00Z', interval '6 hours') AS t
                    ), fast AS (
                        SELECT g.t, a.store_code, a.original_transaction_id
                          FROM grid g
                          JOIN analytics.access('2026-02-01T00:00:00Z', '2026-08-01T00:00:00Z', true) a
                            ON a.starts_at <= g.t AND g.t < a.ends_at
                    ), rule AS (
                        SELECT g.t, s.store_code, s.original_transaction_id
                          FROM grid g CROSS JOIN LATERAL ledger.subscriptions_at(g.t) s
                         WHERE s.entitled
                    )
                    SELECT (SELECT count(*) FROM rule)::bigint AS compared,
                           (SELECT count(*) FROM rule r JOIN ledger.subscriptions_at(r.t) s USING (store_code, original_transaction_id)
                             WHERE s.status = 'inGracePeriod')::bigint AS in_grace,
                           (SELECT string_agg(format('%s %s', t, original_transaction_id), ', ')
                              FROM (SELECT * FROM fast EXCEPT SELECT * FROM rule) x) AS only_fast,
                           (SELECT string_agg(format('%s %s', t, original_transaction_id), ', ')
                              FROM (SELECT * FROM rule EXCEPT SELECT * FROM fast) x) AS only_rule
                    """)[0]
                #expect(try row.decode("compared", as: Int.self) > 500)
                // g: [Apr 1, Apr 8), r: [Apr 1, Apr 5), h: [May 1, May 8), four instants a day.
                #expect(try row.decode("in_grace", as: Int.self) == 28 + 16 + 28)
                #expect(try row.decode("only_fast", as: String?.self) == nil)
                #expect(try row.decode("only_rule", as: String?.self) == nil)
            }
        }
    }

    /// analytics.subscribers counts the entitled lineages at each day's end, and a lineage in
    /// its grace period is one of them.
    @Test func subscribersCountEntitledLineagesOnEveryDay() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try Self.load(c)
                let rows = try c.query("""
                    WITH fast AS (
                        SELECT period, store_code, product_id, active
                          FROM analytics.subscribers('2026-02-25', '2026-07-01', 'day', true)
                    ), rule AS (
                        SELECT d::date AS period, s.store_code, s.product_id, count(*) AS active
                          FROM generate_series('2026-02-25'::timestamp, '2026-06-30', interval '1 day') d
                         CROSS JOIN LATERAL ledger.subscriptions_at((d + interval '1 day') AT TIME ZONE 'UTC') s
                         WHERE s.entitled
                         GROUP BY 1, 2, 3
                    )
                    SELECT (SELECT count(*) FROM rule)::bigint AS compared,
                           (SELECT count(*) FROM ((SELECT * FROM fast EXCEPT SELECT * FROM rule)
                                                  UNION ALL (SELECT * FROM rule EXCEPT SELECT * FROM fast)) x)::bigint AS differ
                    """)
                #expect(try rows[0].decode("compared", as: Int.self) > 150)
                #expect(try rows[0].decode("differ", as: Int.self) == 0)
                // g is in its grace period over [Apr 1, Apr 8): counted at the ends of Mar 31 (Apr 1
                // 00:00, its expiry) to Apr 6, not at the end of Apr 7 (Apr 8 00:00: billing retry).
                let g = try c.query("""
                    SELECT period::text AS day FROM analytics.subscribers('2026-03-30', '2026-04-10', 'day', true)
                     WHERE product_id = 'p-g' ORDER BY 1
                    """).map { try $0.decode("day", as: String.self) }
                #expect(g == (30...31).map { "2026-03-\($0)" } + (1...6).map { "2026-04-0\($0)" })
            }
        }
    }

    /// Churn, per lineage: a grace period that runs out is involuntary churn on the day it ends;
    /// a refund that is reversed is a revocation and then a new start of access.
    @Test func aGracePeriodThatEndsInRetryIsInvoluntaryChurnOnItsLastDay() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try Self.load(c)
                let rows = try c.query("""
                    SELECT product_id, string_agg(format('%s v%s i%s r%s', period, churned_voluntary, churned_involuntary, revoked),
                                                  ', ' ORDER BY period) AS churn
                      FROM analytics.churn('2026-02-01', '2026-08-01', 'day', true)
                     WHERE churned > 0
                     GROUP BY 1 ORDER BY 1
                    """)
                let churn = Dictionary(uniqueKeysWithValues: try rows.map {
                    (try $0.decode("product_id", as: String.self), try $0.decode("churn", as: String.self))
                })
                #expect(churn["p-g"] == "2026-04-08 v0 i1 r0", "ends with its grace period, in billing retry")
                #expect(churn["p-r"] == "2026-05-05 v0 i1 r0", "recovered in its grace period: no churn until its renewal expired")
                #expect(churn["p-v"] == "2026-04-01 v1 i0 r0")
                #expect(churn["p-x"] == "2026-04-15 v0 i1 r0", "extended before it expired")
                #expect(churn["p-y"] == "2026-04-01 v0 i1 r0, 2026-04-20 v0 i1 r0", "lapsed, then extended")
                #expect(churn["p-f"] == "2026-03-10 v0 i0 r1, 2026-04-01 v0 i1 r0", "refunded, reversed, then expired")
                #expect(churn["p-b"] == "2026-04-01 v0 i1 r0")
            }
        }
    }
}
