import Foundation
import LedgerTestSupport
import Postgres
import Testing

/// `ledger analytics` cannot hold the database either: a range over the limits is a usage error
/// before the database is asked, `--timeout` stops a report that runs longer, and Ctrl-C stops
/// the report's statement on the database, not only the process. The reports are made to wait
/// on a lock (``ReportBlocker``).
@Suite("ledger analytics: limits, timeout and Ctrl-C")
struct AnalyticsLimitCommandTests {
    private func analytics(_ arguments: [String], _ db: TestDatabase, timeout: TimeInterval = 60) throws -> LedgerProcess.Output {
        try LedgerProcess.run(["analytics"] + arguments + ["--database-url", db.conninfo], timeout: timeout)
    }

    @Test func aRangeOverTheLimitsIsAUsageErrorNamingTheOptionAndRunsNothing() async throws {
        try await TestDatabase.with { db in
            let blocker = try ReportBlocker(db)
            defer { blocker.release() }
            let cases: [([String], String)] = [
                (["subscribers", "--from", "0001-01-01", "--to", "9999-12-31"], "by month"),
                (["churn", "--from", "2020-01-01", "--to", "2023-01-02"], "at most 1096 days"),
                (["subscribers", "--from", "0001-01-01", "--to", "9999-12-31", "--by", "month"], "at most 1200 months"),
            ]
            for (arguments, words) in cases {
                // A report that ran would wait on the lock until the process is killed.
                let out = try analytics(arguments, db, timeout: 60)
                #expect(!out.timedOut)
                #expect(out.status == 2, "\(arguments): \(out.stderr)")
                #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains("--to: ")
                        && out.stderr.contains(words), "\(out.stderr)")
                #expect(out.stdout.isEmpty)
            }
            #expect(try blocker.reportsRunning() == 0)
        }
    }

    @Test func aReportPastItsTimeoutExits1WithOneLine() async throws {
        try await TestDatabase.with { db in
            let blocker = try ReportBlocker(db)
            defer { blocker.release() }
            let out = try analytics(["subscribers", "--from", "2026-01-01", "--to", "2026-02-01", "--timeout", "1"], db, timeout: 60)
            #expect(!out.timedOut)
            #expect(out.status == 1, "\(out.stderr)")
            #expect(out.stderr == "ledger: the report ran longer than the report timeout (1 s) and was stopped: "
                    + "ask for a shorter range, by month or for one store\n")
            #expect(try blocker.reportsRunning() == 0)
        }
    }

    @Test func ctrlCStopsTheReportOnTheDatabase() async throws {
        try await TestDatabase.with { db in
            let blocker = try ReportBlocker(db)
            defer { blocker.release() }
            let report = try LedgerProcess.start(["analytics", "churn", "--from", "2026-01-01", "--to", "2026-02-01",
                                                  "--timeout", "600", "--database-url", db.conninfo])
            defer { report.kill() }
            #expect(try await blocker.wait(timeout: 300) { $0 == 1 })
            report.kill(SIGINT)
            // Gone from the database, while the lock still stands (it would wait on it for ever).
            #expect(try await blocker.wait(timeout: 15) { $0 == 0 })
            let out = report.wait(timeout: 30)
            #expect(out.status == 130, "\(out.stderr)")
            #expect(out.stderr == "ledger: interrupted; the report was cancelled on the database\n")
        }
    }
}
