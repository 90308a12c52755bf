import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

extension HeavyReliabilityTests.CommandsOnWorkers {
    /// A shard moved while a transaction on a worker has read it and not yet written it, the case
    /// that loses a registry row in a rebalance under writes without the commands' placement locks. Three workers: the transaction runs on
    /// the first; the shard lives on the second and moves to the third. The transaction first sends
    /// a consume that reads the shard and writes nothing, then, once the move has started, a
    /// purchase that writes the shard:
    /// - `registry`: the consume of a paymentSeq not yet recorded (refused) reads the paymentSeq's
    ///   `payment_keys` shard; the purchase then claims that paymentSeq there;
    /// - `owner`: the consume of the user's payment consumed already reads the user's shard (on the
    ///   second worker); the purchase then appends the user's event there.
    ///
    /// Unheld, the move ends at once, and the write goes through the connection of the read to the
    /// placement the move left behind, lost when Citus drops it (Citus 13.2.2).
    /// `ledger.lock_shard_placements`, taken before the first command reads anything, makes the move
    /// wait for the transaction: the write is in the moved shard, and the projections equal a
    /// replay.
    @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"),
          arguments: ["registry", "owner"])
    func aShardMovedBetweenATransactionsReadAndItsWriteKeepsTheWrite(shard kind: String) async throws {
        try await Self.withWorkersAppending { cluster, coordinator in
            let added = try cluster.addWorker()
            // (A rebalance copies the reference tables to a new worker first; a move alone does not.)
            try coordinator.execute("SELECT replicate_reference_tables('block_writes')")
            let (writer, source) = (cluster.workers[0], cluster.workers[1])
            let placedOn = { (table: String, value: String) throws -> Int in try Self.placedOn(coordinator, table, value) }
            let (table, user, seq): (String, String, String)
            if kind == "registry" {
                table = "ledger.payment_keys"
                user = try #require(try (1...64).map { "mover-\($0)" }.first { try placedOn("ledger.events", $0) == writer.port },
                                    "no user among 64 on the first worker")
                seq = try #require(try (1...64).map { "moved-\($0)" }.first { try placedOn(table, $0) == source.port },
                                   "no paymentSeq among 64 in a registry shard on the second worker")
            } else {
                table = "ledger.events"
                user = try #require(try (1...64).map { "mover-\($0)" }.first { try placedOn(table, $0) == source.port },
                                    "no user among 64 on the second worker")
                seq = "moved-1"
            }
            let key = kind == "registry" ? seq : user   // the shard that moves: of `table`, for `key`
            let consume = { (seq: String) throws -> LedgerCommand in
                try LedgerCommand(line: Array("""
                    {"type":"consume","userId":"\(user)","paymentSeq":"\(seq)","purchaseToken":"tok-\(seq)"}
                    """.utf8))
            }
            var expected: [CommandOutcome.Status] = [.rejected]
            if kind == "owner" {
                let setup = try writer.connect()
                defer { setup.close() }
                let bought = try setup.executeBatch([try Self.purchase(user: user, seq: "owned-1", transaction: "t-owned-1")], routedBy: user)
                #expect(bought.map(\.status) == [.recorded])
                #expect(try setup.executeBatch([try consume("owned-1")], routedBy: user).map(\.status) == [.consumed])
                expected = [.alreadyConsumed]
            }

            let transaction = try writer.connect()
            defer { transaction.close() }
            try transaction.execute("BEGIN")
            let read = try transaction.executeBatch([try consume(kind == "owner" ? "owned-1" : seq)], routedBy: user)
            #expect(read.map(\.status) == expected, "\(read)")

            let move = Background { () throws -> Void in
                let c = try cluster.connect()
                defer { c.close() }
                try Self.moveShard(c, table, key, from: source.port, to: added.port)
            }
            let deadline = Date().addingTimeInterval(5)
            while !move.isFinished, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(!move.isFinished, "the move did not wait for the transaction that read its shard")

            let record = try Self.purchase(user: user, seq: seq, transaction: "t-\(seq)")
            #expect(try transaction.executeBatch([record], routedBy: user).map(\.status) == [.recorded])
            try transaction.execute("COMMIT")
            try #require(try await move.value() != nil)

            #expect(try placedOn(table, key) == added.port)
            #expect(try coordinator.count("SELECT count(*) FROM ledger.payment_keys WHERE payment_seq = '\(seq)' AND user_id = '\(user)'") == 1,
                    "the registry row of \(seq) is not in its shard")
            #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE user_id = '\(user)' AND data->>'paymentSeq' = '\(seq)'") == 1,
                    "the event of \(seq) is not in the user's shard")
            let report = try ProjectionVerifier(connection: coordinator).verify()
            #expect(report.isEqual, "\(report.differences)")
        }
    }
}
