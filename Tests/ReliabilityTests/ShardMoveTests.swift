import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

extension HeavyReliabilityTests.CommandsOnWorkers {
    /// A user's shards moved by the rebalancer's own function (`citus_move_shard_placement`, as
    /// `citus_rebalance_start` moves them after a worker is added), from the second worker to the
    /// first, between two of the user's commands. The user's next events are appended on the first
    /// worker, whose range of positions is below the second's: the renewal holds a lower position
    /// than the purchase it renews. Every answer stays: the live projections, a replay (`verify`)
    /// and a rebuild; the reader returns every event once; and the second worker, which keeps the
    /// moved shards' tables until Citus's cleanup drops them, never takes them for the user's.
    @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
    func aUsersShardsMovedToAnotherWorkerKeepEveryAnswer() async throws {
        try await Self.withWorkersAppending { cluster, coordinator in
            let from = cluster.workers[1], to = cluster.workers[0]
            let placement = { (user: String) throws -> Int in try Self.placedOn(coordinator, "ledger.events", user) }
            let user = try #require(try (1...64).map { "u-\($0)" }.first { try placement($0) == from.port },
                                    "no user among 64 on the second worker")
            let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 2)
            let purchase = Fixture.subscription("S-1", user: user, transaction: "L-1",
                                                from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
            let renewal = Fixture.subscription("S-2", user: user, transaction: "L-1b", original: "L-1",
                                               from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
            let gems = Fixture.consumable("P-1", user: user)
            #expect(try await ledger.execute(.record(purchase, kind: .purchase)).status == .recorded)
            #expect(try await ledger.execute(.record(gems, kind: .purchase)).status == .recorded)
            let reader = try cluster.connect()
            defer { reader.close() }
            var follower = CatchUpReader(batchSize: 1)
            var read: [CatchUpReader.Event] = []
            // Reads until `count` events came, or a minute passed (an event is returned once every
            // older transaction ended, on every node).
            func readUntil(_ count: Int) async throws {
                let deadline = Date().addingTimeInterval(60)
                while read.count < count, Date() < deadline {
                    read += try follower.next(on: reader)
                    if read.count < count { try await Task.sleep(for: .milliseconds(20)) }
                }
            }
            try await readUntil(2)
            #expect(read.count == 2)

            // The move: every table colocated with the log moves with it. Citus's cleanup of the
            // tables left behind waits until the test has used them.
            try coordinator.execute("ALTER SYSTEM SET citus.defer_shard_delete_interval = -1")
            try coordinator.execute("SELECT pg_reload_conf()")
            let shard = try coordinator.count("SELECT get_shard_id_for_distribution_column('ledger.events', '\(user)')")
            try Self.moveShard(coordinator, "ledger.events", user, from: from.port, to: to.port)
            #expect(try placement(user) == to.port)
            // The worker the shards left keeps their tables until Citus's cleanup drops them; the
            // test holds the cleanup back (below) so that they are there for the span statements.
            let stillThere = { () throws -> Bool in
                let left = try from.connect()
                defer { left.close() }
                return try left.query(SQL(unsafeSQL: "SELECT to_regclass('ledger.events_\(shard)') IS NOT NULL AS here"))[0].decode("here", as: Bool.self)
            }
            #expect(try stillThere(), "the moved shard's table is gone from the worker it left")

            #expect(try await ledger.execute(.record(renewal, kind: .renewal)).status == .recorded)
            let consumed = try await ledger.execute(.consume(paymentSeq: "P-1", userId: user, purchaseToken: "tok-P-1", time: nil))
            #expect(consumed.status == .consumed, "\(consumed)")
            await ledger.close()
            let positions = try coordinator.query("""
                SELECT data->>'paymentSeq' AS seq, position FROM ledger.events WHERE type IN ('PurchaseRecorded', 'RenewalRecorded')
                 ORDER BY position
                """).map { try $0.decode("seq", as: String.self) }
            #expect(positions == ["S-2", "S-1", "P-1"], "the renewal, appended on the first worker, holds the lowest position")
            // The renewal's event says that it joined a lineage begun before: the replay's first
            // payment of a lineage is its unmarked one, not its lowest position.
            let marked = try coordinator.query("SELECT data->>'paymentSeq' AS seq FROM ledger.events WHERE data->>'lineageClaimed' = 'false'")
                .map { try $0.decode("seq", as: String.self) }
            #expect(marked == ["S-2"])

            // The live answers.
            let firstPaymentIsThePurchase = { () throws -> Bool in
                try coordinator.count("""
                    SELECT count(*) FROM ledger.lineages l JOIN ledger.payments p
                        ON p.user_id = l.user_id AND p.recorded_position = l.first_position
                     WHERE l.user_id = '\(user)' AND p.payment_seq = 'S-1'
                    """) == 1
            }
            let subscription = try #require(try Subscription.fetchAll(coordinator, userId: user, at: Fixture.time("2026-02-15T00:00:00Z"),
                                                                      includeExpired: true).first)
            #expect(subscription.status == .active && subscription.expiryTime == Fixture.time("2026-03-01T00:00:00Z"), "\(subscription)")
            #expect(try firstPaymentIsThePurchase(), "the lineage's first payment is the purchase")
            #expect(try coordinator.count("SELECT count(*) FROM ledger.payments WHERE user_id = '\(user)' AND consumed_at IS NULL AND product_type = 'CONSUMABLE'") == 0)

            // The reader: the two events appended after the move, once.
            try await readUntil(4)
            let all = try coordinator.query("SELECT position FROM ledger.events ORDER BY position").map { try $0.decode("position", as: Int64.self) }
            #expect(read.map(\.position).sorted() == all, "the reader returned \(read.map(\.position)) of \(all)")
            #expect(try follower.next(on: reader).isEmpty)

            // The worker the shards left: until Citus's cleanup drops them it keeps their tables,
            // which are not the user's any more. A span statement called there reads and writes the
            // user's rows through Citus, on the first worker.
            let left = try from.connect()
            defer { left.close() }
            let state = """
                SELECT (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM ledger.entitled_spans x WHERE x.user_id = '\(user)')
                       || ' | ' || (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM ledger.lineage_states x WHERE x.user_id = '\(user)') AS s
                """
            let before = try coordinator.query(SQL(unsafeSQL: state))[0].decode("s", as: String.self)
            try left.execute("BEGIN")
            _ = try left.query(SQL(unsafeSQL: "SELECT max(position) AS p FROM ledger.events WHERE user_id = '\(user)'"))
            try left.execute(SQL(unsafeSQL: "SELECT ledger.refresh_spans(ARRAY['AS'], ARRAY['L-1'], ARRAY['\(user)'])"))
            try left.execute(SQL(unsafeSQL: "SELECT ledger.refresh_states(ARRAY['AS'], ARRAY['L-1'], ARRAY['-infinity'::timestamptz], ARRAY['\(user)'])"))
            let prepared = try left.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'ledger\\_refresh\\_%'")
                .map { try $0.decode("name", as: String.self) }
            #expect(prepared.isEmpty, "the worker the shards left ran \(prepared) on their old tables")
            try left.execute("COMMIT")
            #expect(try coordinator.query(SQL(unsafeSQL: state))[0].decode("s", as: String.self) == before)
            #expect(try stillThere(), "the old tables were gone before the span statements were called")
            try coordinator.execute("CALL citus_cleanup_orphaned_resources()")
            #expect(try !stillThere())

            // A replay, then a rebuild, then a replay again.
            let report = try ProjectionVerifier(connection: coordinator).verify()
            #expect(report.isEqual, "\(report.differences)")
            _ = try ProjectionRebuilder(connection: coordinator).rebuild()
            let again = try ProjectionVerifier(connection: coordinator).verify()
            #expect(again.isEqual, "\(again.differences)")
            #expect(try firstPaymentIsThePurchase(), "after the rebuild, the lineage's first payment is still the purchase")
        }
    }
}
