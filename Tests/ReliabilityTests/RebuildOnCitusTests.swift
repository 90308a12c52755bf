import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

extension HeavyReliabilityTests {
    /// A rebuild on a Citus cluster keeps the coordinator's snapshot and applies what the workers'
    /// snapshots show (ProjectionRebuilder+Cluster.swift). A transaction Citus committed on the
    /// coordinator and not yet on a worker is in the one and not in the others: without the
    /// consistent start the rebuild neither replays it nor catches it up, and its event is
    /// missing from the rebuilt projections for good. The test makes that state as Citus leaves it
    /// (`commitOnTheCoordinatorOnly`), with Citus's recovery off, starts a rebuild, lets Citus's own recovery commit the transaction a
    /// moment later, and finds the event's product in the rebuilt projections.
    @Suite("Rebuild and verify on a Citus cluster of its own")
    struct RebuildOnCitus {
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aRebuildWaitsForATransactionStillPreparedOnAWorkerAndProjectsItsEvent() async throws {
            try await PrivateCluster.with(settings: ["citus.recover_2pc_interval = -1"], citus: true) { cluster in
                let coordinator = try cluster.connect()
                defer { coordinator.close() }
                let outcomes = try coordinator.ingest([
                    #"{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE"}"#,
                ])
                try #require(outcomes.count == 1)
                _ = try coordinator.query("SELECT recover_prepared_transactions()")
                try #require(try coordinator.count("SELECT count(*) FROM pg_dist_transaction") == 0)

                // A product declared in a transaction committed on the coordinator, still prepared on
                // the worker that holds the owner '' (a product has no user).
                let (position, _) = try cluster.commitOnTheCoordinatorOnly(
                    owner: "", stream: "product:GG:in-doubt", type: "ProductDeclared",
                    data: #"{"storeCode": "GG", "productId": "in-doubt", "productType": "CONSUMABLE"}"#)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE position = \(position)") == 0)
                #expect(try coordinator.query("SELECT ledger.prepared_in_doubt() AS n")[0].decode("n", as: Int.self) == 1)

                let rebuilding = Background { () throws -> RebuildSummary in
                    let c = try cluster.connect()
                    defer { c.close() }
                    return try ProjectionRebuilder(connection: c).rebuild()
                }
                // The rebuild waits at its start; Citus's recovery then commits the transaction.
                try await Task.sleep(for: .seconds(3))
                #expect(!rebuilding.isFinished, "the rebuild did not wait for the transaction prepared on a worker")
                #expect(try coordinator.query("SELECT recover_prepared_transactions() AS n")[0].decode("n", as: Int.self) == 1)
                let summary = try #require(try await rebuilding.value())
                #expect(summary.replayed == 2, "replayed \(summary.replayed) events")
                #expect(try coordinator.query("SELECT string_agg(product_id, ' ' ORDER BY product_id) AS p FROM ledger.products")[0]
                    .decode("p", as: String.self) == "gems in-doubt")
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
            try await PrivateCluster.with(settings: ["citus.recover_2pc_interval = -1"], citus: true) { cluster in
                let coordinator = try cluster.connect()
                defer { coordinator.close() }
                try #require(try coordinator.ingest([
                    #"{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE"}"#,
                ]).count == 1)
                _ = try coordinator.query("SELECT recover_prepared_transactions()")
                _ = try cluster.commitOnTheCoordinatorOnly(
                    owner: "", stream: "product:GG:in-doubt", type: "ProductDeclared",
                    data: #"{"storeCode": "GG", "productId": "in-doubt", "productType": "CONSUMABLE"}"#)
                #expect(try coordinator.query("SELECT ledger.prepared_in_doubt() AS n")[0].decode("n", as: Int.self) == 1)

                let verifying = Background { () throws -> VerifyReport in
                    let c = try cluster.connect()
                    defer { c.close() }
                    return try ProjectionVerifier(connection: c).verify()
                }
                try await Task.sleep(for: .seconds(3))
                #expect(!verifying.isFinished, "the verify did not wait for the transaction prepared on a worker")
                #expect(try coordinator.query("SELECT recover_prepared_transactions() AS n")[0].decode("n", as: Int.self) == 1)
                let report = try #require(try await verifying.value())
                #expect(report.events == 2, "replayed \(report.events) events")
                let differences = report.differences.map { "\($0.table) \($0.kind) \($0.key.map(\.value).joined(separator: " "))" }
                #expect(differences == ["products missing GG in-doubt"], "\(differences)")
                #expect(report.differingRows.filter { $0.value > 0 }.keys.sorted() == ["products"])
            }
        }
    }
}
