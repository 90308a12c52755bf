import LedgerDemo
import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The views in schema `analytics`: the same figures as the functions, the §3.2 rule, documented,
/// readable by ledger_reader.
@Suite("Analytics views")
struct AnalyticsViewTests {
    typealias F = AnalyticsFixture

    /// Every row of a query as text, in order.
    private func lines(_ c: Connection, _ sql: String) throws -> [String] {
        try c.query(SQL(unsafeSQL: "SELECT x::text AS line FROM (\(sql)) x")).map { try $0.decode("line") }
    }

    @Test func dailyViewsGiveTheirFunctionsFiguresDayByDay() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                let pairs = [
                    ("revenue_daily", "revenue('2026-01-01', '2026-03-01', 'day', false)", "1, 2, 3, 4"),
                    ("active_subscriptions_daily", "subscribers('2026-01-01', '2026-03-01', 'day', false)", "1, 2, 3"),
                    ("churn_daily", "churn('2026-01-01', '2026-03-01', 'day', false)", "1, 2, 3"),
                    ("refunds_daily", "refunds('2026-01-01', '2026-03-01', 'day', false)", "1, 2, 3, 4"),
                ]
                for (view, function, order) in pairs {
                    let fromView = try lines(c, "SELECT * FROM analytics.\(view) ORDER BY \(order)")
                    #expect(!fromView.isEmpty, "\(view) is empty")
                    #expect(fromView == (try lines(c, "SELECT * FROM analytics.\(function) ORDER BY \(order)")), "\(view)")
                }
                // A WHERE on day narrows the view: the refund across the month boundary.
                #expect(try lines(c, "SELECT day, currency, payments, gross, refunds, net FROM analytics.revenue_daily WHERE day = '2026-02-01'")
                        == ["(2026-02-01,USD,0,0,0.99,-0.99)"])
                #expect(try lines(c, "SELECT sum(active) FROM analytics.active_subscriptions_daily WHERE day = '2026-01-10'") == ["(2)"])
                #expect(try lines(c, "SELECT product_id, unconsumed FROM analytics.unconsumed_backlog ORDER BY store_code, product_id")
                        == ["(gem_100,1)", "(gem_550,1)", "(\"gem \"\"big\"\", pack\",1)"])
            }
        }
    }

    /// The set-based count equals ledger.subscriptions_at (docs/contract.md §3.2) at every day's end.
    @Test func subscribersEqualSubscriptionsAtOnEveryDayOfDemoData() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                let outcomes = try c.ingest(Array(DemoGenerator(seed: 11, users: 150)))
                #expect(outcomes.filter { $0.status != .rejected }.count > 500)
                let rows = try c.query("""
                    WITH fast AS (
                        SELECT period, store_code, product_id, active
                          FROM analytics.subscribers('2026-01-01', '2027-01-01', 'day', true)
                    ), rule AS (
                        SELECT d::date AS period, s.store_code, s.product_id, count(*) AS active
                          FROM generate_series('2026-01-01'::timestamp, '2026-12-31', interval '1 day') d
                         CROSS JOIN LATERAL ledger.subscriptions_at((d + interval '1 day') AT TIME ZONE 'UTC') s
                         WHERE s.entitled
                         GROUP BY 1, 2, 3
                    )
                    SELECT (SELECT count(*) FROM rule)::bigint AS compared,
                           (SELECT count(*) FROM (SELECT * FROM fast EXCEPT SELECT * FROM rule) x)::bigint AS only_fast,
                           (SELECT count(*) FROM (SELECT * FROM rule EXCEPT SELECT * FROM fast) x)::bigint AS only_rule
                    """)
                #expect(try rows[0].decode("compared", as: Int.self) > 300)
                #expect(try rows[0].decode("only_fast", as: Int.self) == 0)
                #expect(try rows[0].decode("only_rule", as: Int.self) == 0)
                // Months cut by the range: counted at Feb 1, ..., Dec 1 and at Dec 10 (--to).
                let months = try c.query("""
                    WITH fast AS (
                        SELECT period, store_code, product_id, active
                          FROM analytics.subscribers('2026-01-15', '2026-12-10', 'month', true)
                    ), rule AS (
                        SELECT e.period, s.store_code, s.product_id, count(*) AS active
                          FROM analytics.periods('2026-01-15', '2026-12-10', 'month') e
                         CROSS JOIN LATERAL ledger.subscriptions_at(e.ends_at) s
                         WHERE s.entitled
                         GROUP BY 1, 2, 3
                    )
                    SELECT (SELECT count(*) FROM rule)::bigint AS compared,
                           (SELECT count(*) FROM ((SELECT * FROM fast EXCEPT SELECT * FROM rule)
                                                  UNION ALL (SELECT * FROM rule EXCEPT SELECT * FROM fast)) x)::bigint AS differ
                    """)
                #expect(try months[0].decode("compared", as: Int.self) > 30)
                #expect(try months[0].decode("differ", as: Int.self) == 0)
            }
        }
    }

    @Test func figuresDoNotDependOnTheSessionTimeZone() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                let q = F.query("2026-01-01", "2026-03-01")
                let utc = (try RevenueRow.fetchAll(c, q), try SubscribersRow.fetchAll(c, q), try ChurnRow.fetchAll(c, q), try RefundsRow.fetchAll(c, q))
                try c.executeScript(unsafeSQL: "SET TimeZone = 'Pacific/Kiritimati'")
                #expect(try RevenueRow.fetchAll(c, q) == utc.0)
                #expect(try SubscribersRow.fetchAll(c, q) == utc.1)
                #expect(try ChurnRow.fetchAll(c, q) == utc.2)
                #expect(try RefundsRow.fetchAll(c, q) == utc.3)
                #expect(try CalendarDay.fetchPeriods(c, F.query("2026-01-30", "2026-02-02")).map(\.description) == ["2026-01-30", "2026-01-31", "2026-02-01"])
            }
        }
    }

    @Test func everyViewAndColumnIsDocumented() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let views = try lines(c, "SELECT table_name FROM information_schema.views WHERE table_schema = 'analytics' ORDER BY 1")
                #expect(views == ["(active_subscriptions_daily)", "(churn_daily)", "(refunds_daily)", "(revenue_daily)", "(unconsumed_backlog)"])
                let undocumented = try lines(c, """
                    SELECT cls.relname || coalesce('.' || att.attname, '')
                      FROM pg_class cls JOIN pg_namespace n ON n.oid = cls.relnamespace
                      LEFT JOIN pg_attribute att ON att.attrelid = cls.oid AND att.attnum > 0
                     WHERE n.nspname = 'analytics' AND cls.relkind = 'v'
                       AND (obj_description(cls.oid, 'pg_class') IS NULL
                            OR (att.attnum IS NOT NULL AND col_description(cls.oid, att.attnum) IS NULL))
                    """)
                #expect(undocumented.isEmpty, "\(undocumented)")
                // An empty ledger: every view answers, with no rows.
                for view in views {
                    #expect(try c.count("SELECT count(*) FROM analytics.\(view.dropFirst().dropLast())") == 0)
                }
                #expect(try lines(c, """
                    SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                     WHERE n.nspname = 'analytics' AND obj_description(p.oid, 'pg_proc') IS NULL
                    """).isEmpty)
            }
        }
    }

    @Test func ledgerReaderCanQueryEveryViewAndFunction() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                try c.executeScript(unsafeSQL: "SET ROLE ledger_reader")
                for view in ["revenue_daily", "active_subscriptions_daily", "churn_daily", "refunds_daily", "unconsumed_backlog"] {
                    #expect(try c.count("SELECT count(*) FROM analytics.\(view)") > 0, "\(view)")
                }
                #expect(try RevenueRow.fetchAll(c, F.query("2026-01-01", "2026-02-01")).count > 0)
                #expect(try BacklogRow.fetchAll(c, at: Fixture.time("2026-01-10T00:00:00Z")).count == 2)
                #expect(throws: PostgresError.self) { try c.execute("DELETE FROM ledger.payments") }
            }
        }
    }

    @Test func anUnknownPeriodIsRefusedByName() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let error = try #require(throws: PostgresError.self) {
                    try c.query("SELECT * FROM analytics.revenue('2026-01-01', '2026-02-01', 'hour')")
                }
                #expect(error.sqlState == SQLState("22023"))
                #expect(error.message.contains("day, week, month or year"))
            }
        }
    }
}
