import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Synchronization
import Testing

extension HeavyReliabilityTests.CommandsOnWorkers {
    /// A third worker added (`citus_add_node`) and the shards rebalanced onto it
    /// (`citus_rebalance_start` with `block_writes`, and `citus_rebalance_wait`), Citus's two steps
    /// alone, while four writers renew 16 users' subscriptions and buy and consume their goods
    /// through the library, round after round, and for three rounds after it. Every command
    /// answers as the contract says, every acknowledged one is in the log once, the new worker
    /// holds shards and takes commands (making its scratch tables on the first,
    /// `ledger.spans_scratch_here`: without it every command sent there fails, even after `ledger
    /// migrate`), the projections equal a replay, the hash chains hold, and the reader, following
    /// from the start, returns every event once. Without the commands' placement locks
    /// (`ledger.lock_shard_placements`) a rebalance under these writes loses a registry row now
    /// and then: 1 run of 8 (docs/scale-out.md, "Rebalancing under writes").
    @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
    func aWorkerAddedAndTheShardsRebalancedUnderWritesLoseNothing() async throws {
        try await Self.withWorkersAppending { cluster, coordinator in
            let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 4)
            let users = (0..<16).map { "scale-\($0)" }
            let day: @Sendable (Int) -> String = { n in
                ISO8601DateFormatter().string(from: Fixture.time("2026-01-01T00:00:00Z").addingTimeInterval(Double(n) * 86_400))
            }
            for user in users {
                let purchase = Fixture.subscription("\(user)-S0", user: user, transaction: "L-\(user)", from: day(0), to: day(1))
                #expect(try await ledger.execute(.record(purchase, kind: .purchase)).status == .recorded)
            }
            let reader = try cluster.connect()
            defer { reader.close() }
            var follower = CatchUpReader(batchSize: 50)
            var read = try follower.next(on: reader)

            // Four writers, four users each, round after round: a renewal, a consumable bought, and
            // consumed, during the rebalance and for three rounds after it.
            let rebalanced = Flag(), answered = Tally()
            let writers = (0..<4).map { writer in
                Task { () -> (rounds: Int, problems: [String]) in
                    var problems: [String] = []
                    var round = 0, roundsAfter = 0
                    while roundsAfter < 3, round < 400, problems.isEmpty {
                        round += 1
                        if rebalanced.value.load(ordering: .acquiring) { roundsAfter += 1 }
                        for user in users[(writer * 4)..<(writer * 4 + 4)] {
                            let renewal = Fixture.subscription("\(user)-S\(round)", user: user, transaction: "\(user)-T\(round)",
                                                               original: "L-\(user)", from: day(round), to: day(round + 1))
                            let gems = Fixture.consumable("\(user)-P\(round)", user: user)
                            do {
                                let answers = [
                                    try await ledger.execute(.record(renewal, kind: .renewal)),
                                    try await ledger.execute(.record(gems, kind: .purchase)),
                                    try await ledger.execute(.consume(paymentSeq: gems.paymentSeq, userId: user,
                                                                      purchaseToken: gems.purchaseToken, time: nil)),
                                ]
                                answered.value.add(answers.count, ordering: .relaxed)
                                if answers.map(\.status) != [.recorded, .recorded, .consumed] {
                                    problems.append("\(user) round \(round): \(answers.map { "\($0.status) \($0.error.map { "\($0)" } ?? "")" })")
                                }
                            } catch {
                                problems.append("\(user) round \(round): \(error)")
                            }
                        }
                    }
                    return (round, problems)
                }
            }

            // The operator's two steps, under the writes.
            try await Task.sleep(for: .seconds(2))
            let added = try cluster.addWorker()
            let before = answered.value.load(ordering: .relaxed)
            try coordinator.execute("SELECT citus_rebalance_start(shard_transfer_mode := 'block_writes')")
            try coordinator.execute("SELECT citus_rebalance_wait()")
            rebalanced.value.store(true, ordering: .releasing)
            #expect(answered.value.load(ordering: .relaxed) > before, "no command was answered during the rebalance")
            var rounds: [String: Int] = [:]
            for (writer, task) in writers.enumerated() {
                let (round, problems) = await task.value
                #expect(problems.isEmpty, "writer \(writer): \(problems)")
                for user in users[(writer * 4)..<(writer * 4 + 4)] { rounds[user] = round }
            }
            await ledger.close()

            // The new worker holds shards of the log, and events in its range: those of the users
            // whose shards it holds, appended since (an event's position is its owner's node's).
            let group = try coordinator.count("SELECT groupid FROM pg_dist_node WHERE nodeport = \(added.port) AND noderole = 'primary'")
            #expect(try coordinator.count("""
                SELECT count(*) FROM pg_dist_placement p JOIN pg_dist_shard s USING (shardid)
                 WHERE s.logicalrelid = 'ledger.events'::regclass AND p.groupid = \(group)
                """) > 0)
            #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE position >> 48 = \(group)") > 0,
                    "no event was appended on the added worker's shards")

            // Every acknowledged command once: a purchase, then per round a renewal, a consumable
            // and its consume, for each user; each subscription as its last renewal left it.
            let expected = users.reduce(0) { $0 + 1 + 3 * rounds[$1, default: 0] }
            #expect(try coordinator.count("SELECT count(*) FROM ledger.events") == expected)
            #expect(try coordinator.count("SELECT count(*) FROM ledger.payments WHERE product_type = 'CONSUMABLE' AND consumed_at IS NULL") == 0)
            for user in users {
                let last = rounds[user, default: 0]
                let subscription = try #require(try Subscription.fetchAll(coordinator, userId: user, at: Fixture.time(day(last)),
                                                                          includeExpired: true).first)
                #expect(subscription.expiryTime == Fixture.time(day(last + 1)), "\(user): \(subscription)")
            }

            let report = try ProjectionVerifier(connection: coordinator).verify()
            #expect(report.isEqual && report.events == expected, "\(report.differences)")
            #expect(try ChainVerifier(connection: coordinator).verify().isIntact)

            let deadline = Date().addingTimeInterval(120)
            while read.count < expected, Date() < deadline {
                read += try follower.next(on: reader)
                if read.count < expected { try await Task.sleep(for: .milliseconds(20)) }
            }
            let all = try coordinator.query("SELECT position FROM ledger.events ORDER BY position").map { try $0.decode("position", as: Int64.self) }
            #expect(read.map(\.position).sorted() == all, "the reader returned \(read.count) events of \(all.count)")
            #expect(Set(read.map(\.position)).count == read.count, "the reader repeated an event")
        }
    }
}

/// A flag that the writers read and the test sets once.
private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

/// How many commands the writers had answered.
private final class Tally: Sendable {
    let value = Atomic<Int>(0)
}
