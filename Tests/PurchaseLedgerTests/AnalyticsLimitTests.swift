import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The library's reports cannot ask for unbounded work: the limits refuse a query before the
/// database is asked, and an answer over its rows.
@Suite("Analytics limits")
struct AnalyticsLimitTests {
    static func day(_ text: String) -> CalendarDay { CalendarDay(text)! }

    /// A ledger that cannot reach any database: a refusal from it was made before asking one.
    @Test func aQueryOverTheLimitsIsRefusedBeforeTheDatabaseIsAsked() async throws {
        let ledger = Ledger(databaseURL: "host=/nonexistent dbname=x", poolSize: 1)
        let everything = AnalyticsQuery(from: Self.day("0001-01-01"), to: Self.day("9999-12-31"))
        let byDay = await #expect(throws: LedgerError.self) { try await ledger.subscribers(everything) }
        #expect(byDay?.code == .invalidInput)
        #expect(byDay?.message.hasPrefix("to: a report by day covers at most 1096 days") == true, "\(byDay?.message ?? "")")
        var byMonth = everything
        byMonth.by = .month
        let refused = await #expect(throws: LedgerError.self) { try await ledger.revenue(byMonth) }
        #expect(refused?.message.hasPrefix("to: a report by month covers at most 1200 months") == true)
        await #expect(throws: LedgerError.self) { try await ledger.churn(everything) }
        await #expect(throws: LedgerError.self) { try await ledger.refunds(everything) }
        await #expect(throws: LedgerError.self) { try await ledger.periods(everything) }
        await ledger.close()
    }

    /// 92 products subscribed for three years: 100,832 rows by day, over the limit; by month 3,312.
    @Test func anAnswerOverTheRowLimitIsRefusedNamingWhatToNarrow() async throws {
        try await TestDatabase.with { db in
            let lines = (0..<92).map { i in
                AnalyticsFixture.purchase("S\(i)", product: "p_\(i)", type: "AUTO_RENEWABLE", price: "9.99",
                                          at: "2025-12-01T00:00:00Z", expiry: "2030-01-01T00:00:00Z")
            }
            try db.withConnection { c throws in
                #expect(try c.ingest(lines).allSatisfy { $0.status == .recorded })
            }
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1)
            let threeYears = AnalyticsQuery(from: Self.day("2026-01-01"), to: Self.day("2029-01-01"))
            var refused: LedgerError?
            do {
                Issue.record("answered \(try await ledger.subscribers(threeYears).count) rows")
            } catch let error as LedgerError {
                refused = error
            }
            #expect(refused?.code == .invalidInput)
            #expect(refused?.message.hasPrefix("by: the report from 2026-01-01 to 2029-01-01 by day has more than 100000 rows") == true,
                    "\(refused?.message ?? "")")
            var byMonth = threeYears
            byMonth.by = .month
            #expect(try await ledger.subscribers(byMonth).count == 92 * 36)
            await ledger.close()
        }
    }
}
