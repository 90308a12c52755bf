import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// How the library runs its reports (``ReportRunner``): the limits' period count, the report
/// timeout, cancellation on the database when the task is cancelled, and the share of the pool
/// reports may hold. The reports are made to wait on a lock (``ReportBlocker``).
@Suite("Reports: timeout, cancellation and their share of the pool")
struct ReportRunnerTests {
    static func day(_ text: String) -> CalendarDay { CalendarDay(text)! }

    static let month = AnalyticsQuery(from: day("2026-01-01"), to: day("2026-02-01"))

    @Test(arguments: [
        ("2020-01-01", "2023-01-01", AnalyticsPeriod.day, 1096, nil),
        ("2020-01-01", "2023-01-02", .day, 1097, "to"),
        ("2026-01-31", "2026-02-01", .day, 1, nil),
        ("1900-01-01", "2000-01-01", .month, 1200, nil),
        ("1900-01-01", "2000-01-02", .month, 1201, "to"),
        ("1900-01-15", "2000-01-01", .month, 1200, nil),
        ("2026-01-15", "2026-02-02", .month, 2, nil),
        ("2026-02-01", "2026-01-01", .day, 0, "to"),
    ] as [(String, String, AnalyticsPeriod, Int, String?)])
    func theLimitsCountCalendarPeriods(from: String, to: String, by: AnalyticsPeriod, periods: Int, field: String?) {
        let query = AnalyticsQuery(from: Self.day(from), to: Self.day(to), by: by)
        #expect(query.periodCount == periods)
        #expect(AnalyticsLimits.refusal(query)?.field == field)
    }

    @Test func aReportPastTheReportTimeoutThrowsReportTimeoutError() async throws {
        try await TestDatabase.with { db in
            let blocker = try ReportBlocker(db)
            defer { blocker.release() }
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1, reportTimeout: .milliseconds(500))
            let error = await #expect(throws: ReportTimeoutError.self) { try await ledger.churn(Self.month) }
            #expect(error?.timeout == .milliseconds(500))
            #expect(error?.description.hasPrefix("the report ran longer than the report timeout (0.5 s) and was stopped") == true)
            #expect(try blocker.reportsRunning() == 0)
            // The connection went back to the pool usable.
            blocker.release()
            #expect(try await ledger.churn(Self.month).isEmpty)
            await ledger.close()
        }
    }

    @Test func cancellingTheTaskCancelsTheReportOnTheDatabase() async throws {
        try await TestDatabase.with { db in
            let blocker = try ReportBlocker(db)
            defer { blocker.release() }
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1, reportTimeout: nil)
            let report = Task { try await ledger.subscribers(Self.month) }
            #expect(try await blocker.wait(timeout: 300) { $0 == 1 })
            report.cancel()
            await #expect(throws: CancellationError.self) { try await report.value }
            #expect(try blocker.reportsRunning() == 0)
            blocker.release()
            #expect(try await ledger.subscribers(Self.month).isEmpty)
            await ledger.close()
        }
    }

    @Test(arguments: [(1, 1), (2, 1), (3, 2), (4, 3), (8, 6), (16, 12)])
    func reportsHoldAllButAQuarterOfThePool(poolSize: Int, reports: Int) {
        #expect(ReportRunner.connections(poolSize: poolSize) == reports)
    }

    @Test func withAPoolOfTwoACommandGoesOnWhileTwoReportsWait() async throws {
        try await TestDatabase.with { db in
            let blocker = try ReportBlocker(db)
            defer { blocker.release() }
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2, reportTimeout: nil)
            let reports = (0..<2).map { _ in Task { try await ledger.churn(Self.month) } }
            #expect(try await blocker.wait(timeout: 300) { $0 == 1 })
            let deadline = ContinuousClock.now + .seconds(300)
            while ledger.reports.share.statistics.waiting == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(ledger.reports.share.statistics.inUse == 1 && ledger.reports.share.statistics.waiting == 1)
            #expect(try await ledger.record(Fixture.consumable("P1")) == .recorded)
            #expect(try blocker.reportsRunning() == 1)
            blocker.release()
            for report in reports { #expect(try await report.value.isEmpty) }
            await ledger.close()
        }
    }
}
