import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// A `ledger jobs run` process killed with SIGKILL after the store answered and before its
/// effect committed: nothing of that attempt is kept, the job runs again once its lease has
/// passed, and the payment is recorded once (docs/contract.md §6.2).
@Suite("Store jobs: a runner killed between the store's answer and its commit")
struct RunnerKillTests {
    @Test func aRunnerKilledBeforeItsCommitLeavesTheJobToTheNextAndThePaymentIsRecordedOnce() async throws {
        let state = Harness.googleState(
            subscriptions: ["gtok-1": Harness.subscriptionV2(order: "GPA.1234-5678-9012-34567..0", expiry: "2026-04-01T00:00:00Z")])
        try await Harness.with(state) { h in
            _ = try h.seed([GoogleJobTests.sdkPurchase])
            #expect(try h.ingest([GoogleJobTests.renewed]).map(\.status) == [.recorded])
            // A session whose client is gone ends even while it waits for a lock (PostgreSQL
            // otherwise notices only when it next writes to the client, after its commit).
            try h.database.withConnection {
                try $0.executeScript(unsafeSQL: "ALTER DATABASE \"\(h.database.name)\" SET client_connection_check_interval = '100ms'")
            }
            // Hold the token's lock, which the learned payment takes in its finish: the runner
            // claims the job and has the store's answer, then waits before its commit.
            let blocker = try Connection.connect(ConnectionConfiguration(h.database.conninfo))
            defer { blocker.close() }
            try blocker.executeScript(unsafeSQL: """
                BEGIN; SELECT ledger.lock_keys(ARRAY['token:' || encode(sha256(convert_to('gtok-1', 'UTF8')), 'hex')])
                """)
            let runner = try LedgerProcess.start(["jobs", "run", "--until-idle", "--timeout", "60", "--database-url", h.database.conninfo],
                                                 environment: h.environment)
            defer { runner.kill() }
            let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%finish_job%'"
            try await Self.eventually("the finish waiting") { try h.count(waiting) == 1 }
            #expect(try h.calls("GET", "subscriptionsv2/tokens/gtok-1").map(\.status) == [200])
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE attempts = 1") == 1)

            runner.kill(SIGKILL)
            let ended = runner.wait(timeout: 30)
            #expect(ended.signalled)
            // Its session ends while it still waits (so its finish can never commit), then the
            // lock is let go.
            try await Self.eventually("the dead runner's session gone") { try h.count(waiting) == 0 }
            try blocker.executeScript(unsafeSQL: "ROLLBACK")
            // Nothing of the killed attempt: no payment learned, the job still pending under its lease.
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE store_code = 'GG'") == 1)
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE state = 'pending' AND attempts = 1 AND leased_until > now()") == 1)

            // The lease passes (moved, not waited for); the next runner runs it, once.
            #expect(try h.count("WITH moved AS (UPDATE ledger.jobs SET run_after = now() - interval '1 second' RETURNING id) SELECT count(*) FROM moved") == 1)
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.attempt) == [2], "\(runs)")
            #expect(runs.map(\.outcome) == ["recorded"])
            #expect(try h.count("SELECT count(*) FROM ledger.payments WHERE store_code = 'GG'") == 2)
            #expect(try h.count("SELECT count(*) FROM ledger.events WHERE type = 'RenewalRecorded'") == 1)
        }
    }

    /// Polls `condition` every 50 ms for up to 60 seconds.
    static func eventually(_ what: String, _ condition: () throws -> Bool) async throws {
        for _ in 0..<1200 {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("timed out waiting for \(what)")
        throw CancellationError()
    }
}
