import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

extension HeavyReliabilityTests {
    /// A rebuild on a Citus cluster keeps the coordinator's snapshot and applies what the workers'
    /// snapshots show (ClusterSnapshot.swift). A transaction Citus committed on the
    /// coordinator and not yet on a worker is in the one and not in the others: without the
    /// consistent start the rebuild neither replays it nor catches it up, and its event is
    /// missing from the rebuilt projections for good. The test makes that state as Citus leaves it
    /// (`commitOnTheCoordinatorOnly`), with Citus's recovery off, starts a rebuild, lets Citus's own recovery commit the transaction a
    /// moment later, and finds the event's product in the rebuilt projections.
    @Suite("Rebuild and verify on a Citus cluster of its own")
    struct RebuildOnCitus {
        /// The product "gems" declared and committed everywhere, then the product "in-doubt"
        /// declared in a transaction committed on the coordinator and still prepared on the worker
        /// that holds the owner '' (a product has no user), its event alone, without its projection.
        static func declareAProductInDoubt(_ cluster: PrivateCluster, _ coordinator: Connection) throws {
            try #require(try coordinator.ingest([
                #"{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE"}"#,
            ]).count == 1)
            _ = try coordinator.query("SELECT recover_prepared_transactions()")
            try #require(try coordinator.count("SELECT count(*) FROM pg_dist_transaction") == 0)
            let (position, _) = try cluster.commitOnTheCoordinatorOnly(
                owner: "", stream: "product:GG:in-doubt", type: "ProductDeclared",
                data: #"{"storeCode": "GG", "productId": "in-doubt", "productType": "CONSUMABLE"}"#)
            #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE position = \(position)") == 0)
            #expect(try coordinator.query("SELECT ledger.prepared_in_doubt() AS n")[0].decode("n", as: Int.self) == 1)
        }

        /// On a cluster of its own with Citus's recovery off and a product declared in doubt
        /// (`declareAProductInDoubt`): runs `work` (`what`: a rebuild, a verify) on a connection
        /// of its own, checks that it is still waiting 3 s later, lets Citus's recovery commit the
        /// transaction, and hands what `work` returned to `check` with a connection to the
        /// coordinator.
        static func withAProductInDoubt<T: Sendable>(_ what: String, _ work: @escaping @Sendable (Connection) throws -> T,
                                                     check: (T, Connection) throws -> Void) async throws {
            try await PrivateCluster.with(settings: ["citus.recover_2pc_interval = -1"], citus: true) { cluster in
                let coordinator = try cluster.connect()
                defer { coordinator.close() }
                try declareAProductInDoubt(cluster, coordinator)
                let working = Background { () throws -> T in
                    let c = try cluster.connect()
                    defer { c.close() }
                    return try work(c)
                }
                try await Task.sleep(for: .seconds(3))
                #expect(!working.isFinished, "the \(what) did not wait for the transaction prepared on a worker")
                #expect(try coordinator.query("SELECT recover_prepared_transactions() AS n")[0].decode("n", as: Int.self) == 1)
                try check(try #require(try await working.value()), coordinator)
            }
        }

        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aRebuildWaitsForATransactionStillPreparedOnAWorkerAndProjectsItsEvent() async throws {
            try await Self.withAProductInDoubt("rebuild", { try ProjectionRebuilder(connection: $0).rebuild() }) { (summary: RebuildSummary, coordinator: Connection) throws in
                #expect(summary.replayed == 2, "replayed \(summary.replayed) events")
                #expect(try coordinator.query("SELECT string_agg(product_id, ' ' ORDER BY product_id) AS p FROM ledger.products")[0]
                    .decode("p", as: String.self) == "gems in-doubt")
            }
        }

        /// On a cluster of its own with a product declared: a command in flight on the second
        /// worker, a transaction there holding the writers' gate shared as `ledger.lock_keys` takes
        /// it first; `work` (`what`: a rebuild, a verify) on a connection of its own. Waits until a
        /// request for the gate alone queues on that worker (made by a session named
        /// `application`, when given) and checks that `work` has not ended, then commits the
        /// command and hands what `work` returned to `check`, with a connection to that worker.
        static func withACommandHoldingAWorkersGate<T: Sendable>(
            _ what: String, application: String? = nil,
            _ work: @escaping @Sendable (Connection) throws -> T, check: (T, Connection) throws -> Void
        ) async throws {
            try await PrivateCluster.with(citus: true) { cluster in
                let coordinator = try cluster.connect()
                defer { coordinator.close() }
                try #require(try coordinator.ingest([
                    #"{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE"}"#,
                ]).count == 1)
                try #require(cluster.workers.count == 2)
                let command = try cluster.workers[1].connect()
                defer { command.close() }
                let looking = try cluster.workers[1].connect()
                defer { looking.close() }
                try command.execute("BEGIN")
                try command.execute("SELECT pg_advisory_xact_lock_shared(ledger.writers_gate())")
                let working = Background { () throws -> T in
                    let c = try cluster.connect()
                    defer { c.close() }
                    return try work(c)
                }
                let waitingForTheGate = """
                    SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                     WHERE l.locktype = 'advisory' AND NOT l.granted AND l.mode = 'ExclusiveLock'
                       AND ((l.classid::bigint << 32) | l.objid::bigint) = ledger.writers_gate()
                    """ + (application.map { " AND a.application_name = '\($0.replacingOccurrences(of: "'", with: "''"))'" } ?? "")
                let deadline = Date().addingTimeInterval(120)
                while try looking.count(waitingForTheGate) == 0, !working.isFinished, Date() < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(try looking.count(waitingForTheGate) == 1, "the \(what) did not ask for the second worker's gate")
                #expect(!working.isFinished, "the \(what) went on while a worker's command held the gate")
                try command.execute("COMMIT")
                try check(try #require(try await working.value()), looking)
                #expect(try looking.count(waitingForTheGate) == 0)
            }
        }

        /// A command run on a worker (pushed down to its user's worker, or sent there) takes the
        /// writers' gate on that worker, shared. A rebuild's swap takes the gate of every worker
        /// as well, inside its transaction (`ledger.hold_writers_gate`, which Citus runs on the
        /// worker its route reaches): it waits there for the command in flight, as it does on the
        /// coordinator, and swaps once the command has ended. Without the workers' gates the swap
        /// does not wait, and the rebuild ends while the command is open.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aRebuildsSwapWaitsForACommandHoldingTheWritersGateOnAWorker() async throws {
            try await Self.withACommandHoldingAWorkersGate("rebuild", { try ProjectionRebuilder(connection: $0).rebuild() }) {
                (summary: RebuildSummary, _: Connection) throws in
                #expect(summary.replayed == 1)
            }
        }

        /// A verify's and a rebuild's snapshots agree on every node because they are taken with
        /// the writers' gate held alone (`ClusterSnapshot`). Once commands may run on a worker,
        /// each worker's gate is held too, by a connection of the ledger's own to that worker: a
        /// verify waits for a command in flight on the second worker before it takes its
        /// snapshots. Without the workers' gates the verify runs at once, beside the open command.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aVerifysSnapshotsWaitForACommandHoldingTheWritersGateOnAWorker() async throws {
            try await Self.withACommandHoldingAWorkersGate("verify", application: "ledger verify: writers' gate",
                                                          { try ProjectionVerifier(connection: $0).verify() }) {
                (report: VerifyReport, worker: Connection) throws in
                #expect(report.events == 1 && report.differences.isEmpty, "\(report.differences)")
                #expect(try worker.count("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'ledger verify%'") == 0,
                        "the verify's connections to the worker are closed")
            }
        }

        /// A verify compares the live tables with a replay of the log, both read in one transaction
        /// (`ProjectionVerifier`); on a cluster its snapshots start as a rebuild's. The event of a
        /// transaction in doubt is made by hand, without its projection (`commitOnTheCoordinatorOnly`
        /// writes the log alone), so that a verify that sees it names the product missing from the
        /// live table. Without the consistent start the verify runs at once, replays one event of
        /// two and finds the projections equal: it has compared a state that no commit left.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aVerifyWaitsForATransactionStillPreparedOnAWorkerAndReplaysItsEvent() async throws {
            try await Self.withAProductInDoubt("verify", { try ProjectionVerifier(connection: $0).verify() }) { (report: VerifyReport, _: Connection) throws in
                #expect(report.events == 2, "replayed \(report.events) events")
                let differences = report.differences.map { "\($0.table) \($0.kind) \($0.key.map(\.value).joined(separator: " "))" }
                #expect(differences == ["products missing GG in-doubt"], "\(differences)")
                #expect(report.differingRows.filter { $0.value > 0 }.keys.sorted() == ["products"])
            }
        }
    }
}
