import Foundation
import LedgerDemo
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The entitled spans that a batch's rounds defer to the commit (`ledger.defer_spans`, settled by
/// the constraint trigger of `ledger.spans_settle`): a writer's batches leave the spans a replay
/// of the log gives, nothing is left behind in the transient tables, and a writer cannot reach
/// either table or function directly.
@Suite("Entitled spans settled at the commit")
struct DeferredSpansTests {
    @Test func aWritersBatchesLeaveTheSpansOfAReplayAndNothingDue() async throws {
        // The demo's subscriptions renew, are refunded and cancelled within one batch, so a
        // lineage is touched by several rounds of one transaction.
        let lines = Array(DemoGenerator(seed: 31, users: 150))
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                let outcomes = try writer.ingest(lines, batchSize: 200)
                #expect(outcomes.filter { $0.status != .rejected }.count > 500)

                // The writer's role has no way to the transient tables or the functions that
                // fill and settle them: only the command functions (their owner's rights) do.
                #expect(writer.failure("INSERT INTO ledger.spans_settle (xact, target) VALUES (pg_current_xact_id(), 'ledger')") == SQLState("42501"))
                #expect(writer.failure("SELECT count(*) FROM ledger.spans_due") == SQLState("42501"))
                #expect(writer.failure("SELECT ledger.defer_spans('ledger', '{}', '{}', '{}', '{}', '{}')") == SQLState("42501"))
                #expect(writer.failure("SELECT ledger.settle_spans('ledger')") == SQLState("42501"))
            }
            try db.withConnection { c throws in
                #expect(try c.query("SELECT count(*)::bigint AS n FROM ledger.spans_due")[0].decode("n", as: Int.self) == 0)
                #expect(try c.query("SELECT count(*)::bigint AS n FROM ledger.spans_settle")[0].decode("n", as: Int.self) == 0)
                try c.executeScript(unsafeSQL: """
                    SELECT ledger.install_projections('spans_replay');
                    SELECT spans_replay.project_range(1, (SELECT max(position) FROM ledger.events));
                    """)
                let spans = "SELECT string_agg(s::text, E'\\n' ORDER BY s::text) AS rows FROM %@.entitled_spans s"
                let live = try c.query(SQL(unsafeSQL: spans.replacingOccurrences(of: "%@", with: "ledger")))[0].decode("rows", as: String?.self)
                let replayed = try c.query(SQL(unsafeSQL: spans.replacingOccurrences(of: "%@", with: "spans_replay")))[0].decode("rows", as: String?.self)
                #expect((live ?? "").split(separator: "\n").count > 100)
                #expect(live == replayed)
            }
        }
    }

    /// A refund (which locks its payment) and a renewal (which locks its lineage) of one lineage,
    /// in two transactions, settle one after the other: the second waits at its settle until the
    /// first commits, then computes the spans and states from what the first committed. Without
    /// the settle's lock per lineage, the second would fail on the first's rows
    /// (`entitled_spans_pkey`, SQLSTATE 23505), or keep states computed without the refund.
    @Test func twoTransactionsChangingOneLineageSettleOneAfterTheOther() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.subscription("S-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"), kind: .purchase))
                _ = try c.run(.record(Fixture.subscription("S-2", original: "T-S-1", from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z"),
                                      kind: .renewal))
            }
            let refunding = try db.connect()
            defer { refunding.close() }
            try refunding.execute("BEGIN")
            #expect(try refunding.run(.refund(paymentSeq: "S-2", time: Fixture.time("2026-02-10T00:00:00Z"), reason: nil)).status == .recorded)
            try refunding.execute("SELECT ledger.settle_spans('ledger')")

            // The renewal's transaction, on its own connection and thread (it blocks in libpq),
            // settles while the refund's is open.
            let conninfo = db.conninfo
            let renewal = Background { () throws -> SQLState? in
                let renewing = try Connection.connect(ConnectionConfiguration(conninfo))
                defer { renewing.close() }
                try renewing.execute("BEGIN")
                let outcome = try renewing.run(.record(
                    Fixture.subscription("S-3", original: "T-S-1", from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z"),
                    kind: .renewal))
                guard outcome.status == .recorded else { return SQLState("?????") }
                do {
                    try renewing.execute("SELECT ledger.settle_spans('ledger')")
                    try renewing.execute("COMMIT")
                    return nil
                } catch let error as PostgresError {
                    return error.sqlState ?? SQLState("?????")
                }
            }
            // The renewal is waiting for the refund's commit (its settle lock), not done: read
            // until its lock shows (or it finished, or a minute passed).
            var waiting = 0
            let deadline = Date().addingTimeInterval(60)
            while waiting == 0, !renewal.isFinished, Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
                waiting = try db.withConnection { c throws in
                    try c.count("""
                        SELECT count(*) FROM pg_locks
                         WHERE locktype = 'advisory' AND NOT granted
                           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                        """)
                }
            }
            #expect(waiting == 1)
            try refunding.execute("COMMIT")
            #expect(try await renewal.value() == .some(nil))

            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE lineage_id = 'T-S-1'") == 3)
                let report = try ProjectionVerifier(connection: c).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }
    }

    /// Inside a transaction the spans wait for its commit; `ledger.settle_spans` settles them
    /// earlier for a caller that reads them before committing, and the commit then has nothing left.
    @Test func theSpansWaitForTheCommitOrAnExplicitSettle() async throws {
        let lines = Array(DemoGenerator(seed: 37, users: 40))
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try c.execute("BEGIN")
                _ = try c.ingestInOpenTransaction(lines)
                let due = try c.query("SELECT count(*)::bigint AS n FROM ledger.spans_due")[0].decode("n", as: Int.self)
                let before = try c.query("SELECT count(*)::bigint AS n FROM ledger.entitled_spans")[0].decode("n", as: Int.self)
                #expect(due > 10)
                #expect(before == 0)
                try c.execute("SELECT ledger.settle_spans('ledger')")
                let settled = try c.query("SELECT count(*)::bigint AS n FROM ledger.entitled_spans")[0].decode("n", as: Int.self)
                #expect(settled > 10)
                try c.execute("COMMIT")
                #expect(try c.query("SELECT count(*)::bigint AS n FROM ledger.entitled_spans")[0].decode("n", as: Int.self) == settled)
                #expect(try c.query("SELECT count(*)::bigint AS n FROM ledger.spans_due")[0].decode("n", as: Int.self) == 0)
            }
        }
    }

    /// On one server the spans and states are computed by the statements from before the cluster:
    /// the installers drop the owner filters that name a shard on Citus
    /// (`ledger.drop_owner_filters`), which changed the generic plans of a rebuild's settle, and
    /// keep generic plans. A shadow schema's functions, which a rebuild installs, are made the
    /// same way. (On the cluster, scripts/dev test's projection check needs the filters.)
    @Test func onOneServerTheSpansAndStatesNameNoOwner() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try c.execute("SELECT ledger.install_projections('owner_check')")
                let functions = try c.query("""
                    SELECT format('%s.%s', n.nspname, p.proname) AS name,
                           p.prosrc ~ '(span|state)_owner IS NULL' AS filtered,
                           array_to_string(p.proconfig, ' ') AS config
                      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                     WHERE n.nspname IN ('ledger', 'owner_check') AND p.proname IN ('refresh_spans', 'refresh_states')
                     ORDER BY 1
                    """)
                #expect(try functions.map { try $0.decode("name", as: String.self) }
                        == ["ledger.refresh_spans", "ledger.refresh_states", "owner_check.refresh_spans", "owner_check.refresh_states"])
                for function in functions {
                    let name = try function.decode("name", as: String.self)
                    #expect(try function.decode("filtered", as: Bool.self) == false, "\(name) keeps its owner filters")
                    #expect(try function.decode("config", as: String.self).contains("plan_cache_mode=force_generic_plan"), "\(name)")
                }
                #expect(try c.query("SELECT ledger.distributed_log() AS d")[0].decode("d", as: Bool.self) == false)
            }
        }
    }
}

extension Connection {
    /// Runs each line's command on its own (`run`: a batch of one is a single statement, with no
    /// BEGIN or COMMIT of its own), in the caller's open transaction.
    fileprivate func ingestInOpenTransaction(_ lines: [String]) throws -> Int {
        var recorded = 0
        for line in lines {
            // The demo's deliberately bad lines are refused by the decoder: skipped here.
            guard let command = try? LedgerCommand(line: Array(line.utf8)) else { continue }
            if try run(command).status != .rejected { recorded += 1 }
        }
        return recorded
    }
}
