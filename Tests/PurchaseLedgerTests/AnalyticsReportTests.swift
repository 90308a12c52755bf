import Foundation
import LedgerTestSupport
import Postgres
import LedgerOutput
import PurchaseLedger
import Testing

/// Every figure of the analytics reports over `AnalyticsFixture`, computed by hand.
@Suite("Analytics reports give the hand-computed figures")
struct AnalyticsReportTests {
    typealias F = AnalyticsFixture

    private func revenue(_ period: String, _ store: StoreCode, _ currency: String, _ payments: Int,
                         _ gross: PostgresNumeric, _ refunds: PostgresNumeric, _ net: PostgresNumeric) -> RevenueRow {
        RevenueRow(period: F.day(period), storeCode: store, currency: currency, payments: payments,
                   gross: gross, refunds: refunds, net: net)
    }

    @Test func revenueByMonthSumsPaymentsByPurchaseAndRefundsByRefundTime() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                // Jan AS USD: C1 C2 C6 C7 at 0.99 and S1 S2 R1 at 9.99 = 7 payments, 33.93; refunds C1 + R1
                // = 10.98. C2 (bought Jan 31) is refunded Feb 1: February's refunds, net -0.99.
                #expect(try RevenueRow.fetchAll(c, F.query("2026-01-01", "2026-03-01", by: .month)) == [
                    revenue("2026-01-01", .appStore, "USD", 7, "33.93", "10.98", "22.95"),
                    revenue("2026-01-01", .googlePlay, "EUR", 1, "4.99", "0", "4.99"),
                    revenue("2026-01-01", .googlePlay, "USD", 2, "5.98", "0", "5.98"),
                    revenue("2026-02-01", .appStore, "KRW", 1, "1200", "0", "1200"),
                    revenue("2026-02-01", .appStore, "USD", 0, "0", "0.99", "-0.99"),
                ])
                // Sandbox C4 (1.10 EUR) and L4 (9.99 USD) only when asked for.
                #expect(try RevenueRow.fetchAll(c, F.query("2026-01-01", "2026-02-01", by: .month, sandbox: true)) == [
                    revenue("2026-01-01", .appStore, "USD", 8, "43.92", "10.98", "32.94"),
                    revenue("2026-01-01", .googlePlay, "EUR", 2, "6.09", "0", "6.09"),
                    revenue("2026-01-01", .googlePlay, "USD", 2, "5.98", "0", "5.98"),
                ])
                #expect(try RevenueRow.fetchAll(c, F.query("2026-01-01", "2026-03-01", by: .month, stores: [.googlePlay])).map(\.currency)
                        == ["EUR", "USD"])
            }
        }
    }

    @Test func revenueByDayPutsARefundOnItsOwnDayAcrossTheBoundary() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                #expect(try RevenueRow.fetchAll(c, F.query("2026-01-31", "2026-02-03")) == [
                    revenue("2026-01-31", .appStore, "USD", 1, "0.99", "0", "0.99"),
                    revenue("2026-02-01", .appStore, "USD", 0, "0", "0.99", "-0.99"),
                    revenue("2026-02-02", .appStore, "KRW", 1, "1200", "0", "1200"),
                ])
                // Jan 3: C1's refund (bought Jan 1) and T1.
                #expect(try RevenueRow.fetchAll(c, F.query("2026-01-03", "2026-01-04")) == [
                    revenue("2026-01-03", .appStore, "USD", 0, "0", "0.99", "-0.99"),
                    revenue("2026-01-03", .googlePlay, "USD", 1, "2.99", "0", "2.99"),
                ])
            }
        }
    }

    @Test func subscribersByDayCountLineagesActiveAtEachDaysEnd() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                var expected: [SubscribersRow] = []
                for day in 1...22 {
                    let period = F.day("2026-01-\(day < 10 ? "0" : "")\(day)")
                    // L1 until Jan 21 00:00 (renewed without a gap), L3 from Jan 5 10:00 until its refund Jan 20 12:00.
                    let premium = (day <= 19 ? 1 : 0) + (5...19 ~= day ? 1 : 0)
                    if premium > 0 { expected.append(SubscribersRow(period: period, storeCode: .appStore, productId: "premium_month", active: premium)) }
                    // L2: [Jan 3 09:00, Jan 10 09:00) and [Jan 12 06:00, Jan 19 06:00): not at the end of Jan 10 and 11.
                    if 3...9 ~= day || 12...18 ~= day {
                        expected.append(SubscribersRow(period: period, storeCode: .googlePlay, productId: "vip_week", active: 1))
                    }
                }
                #expect(try SubscribersRow.fetchAll(c, F.query("2026-01-01", "2026-01-23")) == expected)
                #expect(try SubscribersRow.fetchAll(c, F.query("2026-01-01", "2026-01-23", stores: [.googlePlay])).count == 14)
                // The sandbox lineage L4 counts from the end of Jan 2 when asked for.
                let sandbox = try SubscribersRow.fetchAll(c, F.query("2026-01-01", "2026-01-04", sandbox: true))
                #expect(sandbox.filter { $0.storeCode == .appStore }.map(\.active) == [1, 2, 2])
            }
        }
    }

    @Test func subscribersByMonthCountAtThePeriodsEndCutToTheRange() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                // At Feb 1 00:00 nothing is active but the sandbox lineage.
                #expect(try SubscribersRow.fetchAll(c, F.query("2026-01-01", "2026-02-01", by: .month)).isEmpty)
                #expect(try SubscribersRow.fetchAll(c, F.query("2026-01-01", "2026-03-01", by: .month, sandbox: true)) == [
                    SubscribersRow(period: F.day("2026-01-01"), storeCode: .appStore, productId: "premium_month", active: 1),
                ])
                // --to cuts January at Jan 16 00:00: L1, L3 and L2's second week.
                #expect(try SubscribersRow.fetchAll(c, F.query("2026-01-10", "2026-01-16", by: .month)) == [
                    SubscribersRow(period: F.day("2026-01-01"), storeCode: .appStore, productId: "premium_month", active: 2),
                    SubscribersRow(period: F.day("2026-01-01"), storeCode: .googlePlay, productId: "vip_week", active: 1),
                ])
                #expect(try CalendarDay.fetchPeriods(c, F.query("2026-01-10", "2026-03-02", by: .month)).map(\.description)
                        == ["2026-01-01", "2026-02-01", "2026-03-01"])
            }
        }
    }

    private func churn(_ day: String, _ store: StoreCode, _ product: String, started: Int = 0, renewed: Int = 0,
                       voluntary: Int = 0, involuntary: Int = 0, revoked: Int = 0) -> ChurnRow {
        ChurnRow(period: F.day(day), storeCode: store, productId: product, started: started, renewed: renewed,
                 churned: voluntary + involuntary + revoked, churnedVoluntary: voluntary,
                 churnedInvoluntary: involuntary, revoked: revoked)
    }

    @Test func churnSplitsCancelledExpiredAndRefundedLineages() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                #expect(try ChurnRow.fetchAll(c, F.query("2026-01-01", "2026-02-01")) == [
                    churn("2026-01-01", .appStore, "premium_month", started: 1),        // S1
                    churn("2026-01-03", .googlePlay, "vip_week", started: 1),           // T1
                    churn("2026-01-05", .appStore, "premium_month", started: 1),        // R1
                    churn("2026-01-10", .googlePlay, "vip_week", voluntary: 1),         // T1 ends, cancelled Jan 5
                    churn("2026-01-11", .appStore, "premium_month", renewed: 1),        // S2 extends S1: no churn
                    churn("2026-01-12", .googlePlay, "vip_week", renewed: 1),           // T2 after a gap: auto-renew on
                    churn("2026-01-19", .googlePlay, "vip_week", involuntary: 1),       // T2 ends, auto-renew on
                    churn("2026-01-20", .appStore, "premium_month", revoked: 1),        // R1 refunded before expiry
                    churn("2026-01-21", .appStore, "premium_month", voluntary: 1),      // S2 ends, cancelled Jan 15
                ])
                #expect(try ChurnRow.fetchAll(c, F.query("2026-01-01", "2026-02-01", by: .month)) == [
                    churn("2026-01-01", .appStore, "premium_month", started: 2, renewed: 1, voluntary: 1, revoked: 1),
                    churn("2026-01-01", .googlePlay, "vip_week", started: 1, renewed: 1, voluntary: 1, involuntary: 1),
                ])
            }
        }
    }

    @Test func aRenewalThatArrivesLateReplacesTheChurnItsAbsenceShowed() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c, withLateRenewal: false)
                let january = F.query("2026-01-01", "2026-02-01", stores: [.appStore])
                // Without S2, L1 ended Jan 11 with auto-renew on (the cancel came later).
                #expect(try ChurnRow.fetchAll(c, january).filter { $0.churned > 0 }
                        == [churn("2026-01-11", .appStore, "premium_month", involuntary: 1),
                            churn("2026-01-20", .appStore, "premium_month", revoked: 1)])
                #expect(try SubscribersRow.fetchAll(c, F.query("2026-01-11", "2026-01-12", stores: [.appStore])).map(\.active) == [1])
                #expect(try c.ingest([F.lateRenewal]).first?.status == .recorded)
                #expect(try ChurnRow.fetchAll(c, january).filter { $0.churned > 0 }.map(\.period.description) == ["2026-01-20", "2026-01-21"])
                #expect(try SubscribersRow.fetchAll(c, F.query("2026-01-11", "2026-01-12", stores: [.appStore])).map(\.active) == [2])
            }
        }
    }

    @Test func refundsCountThoseOfConsumedPaymentsApart() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                #expect(try RefundsRow.fetchAll(c, F.query("2026-01-01", "2026-03-01", by: .month)) == [
                    // C1 (consumed before its refund) and R1; then C2, never consumed.
                    RefundsRow(period: F.day("2026-01-01"), storeCode: .appStore, currency: "USD", refunds: 2,
                               amount: "10.98", refundsAfterConsume: 1, amountAfterConsume: "0.99"),
                    RefundsRow(period: F.day("2026-02-01"), storeCode: .appStore, currency: "USD", refunds: 1,
                               amount: "0.99", refundsAfterConsume: 0, amountAfterConsume: "0"),
                ])
                #expect(try RefundsRow.fetchAll(c, F.query("2026-01-01", "2026-03-01", by: .month, stores: [.googlePlay])).isEmpty)
            }
        }
    }

    @Test func backlogCountsAndAgesGoodsNotHandedOutAtAnInstant() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try F.load(into: c)
                let oddOldest = Fixture.time("2026-01-02T08:00:00Z")
                // Jan 10: C6 (5 days old) and C7 (3 days); C3 (7 days 16 hours). C1 was consumed.
                // p95 of 3 and 5 days: 3 d + 0.95 × 2 d = 423,360 s.
                #expect(try BacklogRow.fetchAll(c, at: Fixture.time("2026-01-10T00:00:00Z")) == [
                    BacklogRow(storeCode: .appStore, productId: "gem_100", unconsumed: 2,
                               oldestPurchaseTime: Fixture.time("2026-01-05T00:00:00Z"),
                               medianAgeSeconds: 345_600, p95AgeSeconds: 423_360),
                    BacklogRow(storeCode: .googlePlay, productId: F.oddProduct, unconsumed: 1, oldestPurchaseTime: oddOldest,
                               medianAgeSeconds: 662_400, p95AgeSeconds: 662_400),
                ])
                let sandbox = try BacklogRow.fetchAll(c, at: Fixture.time("2026-01-10T00:00:00Z"), stores: [.googlePlay], includeSandbox: true)
                #expect(sandbox.map(\.unconsumed) == [2])
                // Feb 15: C6 consumed Jan 20, C2 refunded; C5 waits 12.5 days, C7 39 days, C3 43 days 16 hours.
                #expect(try BacklogRow.fetchAll(c, at: Fixture.time("2026-02-15T00:00:00Z")).map { [$0.productId, "\($0.unconsumed)", "\($0.medianAgeSeconds)"] } == [
                    ["gem_100", "1", "3369600"], ["gem_550", "1", "1080000"], [F.oddProduct, "1", "3772800"],
                ])
            }
        }
    }
}
