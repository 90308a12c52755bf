import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

extension HeavyReliabilityTests {
    /// The reader orders by the transaction id itself: sorted by its text, "10000000" would come
    /// before "9999993", while its WHERE clause and checkpoint compare the ids as numbers.
    @Suite("Catch-up reader across a power of ten of transaction ids")
    struct CatchUpReaderAcrossXidDigits {
        /// The transaction id the cluster's next transaction gets: the older transaction that
        /// holds the reader back takes it, and the 16 writers after it take ids on both sides of
        /// 10,000,000.
        static let firstTransaction: UInt32 = 9_999_992

        @Test func eventsOnBothSidesOfTenMillionTransactionsAreReadOnceEachInTransactionOrder() async throws {
            try await PrivateCluster.with(nextTransactionID: Self.firstTransaction, citus: PrivateCluster.citusAsked) { cluster in
                let holder = try cluster.connect(), writer = try cluster.connect(), reader = try cluster.connect()
                defer { [holder, writer, reader].forEach { $0.close() } }

                // An older transaction appends and stays open: nothing after it is final yet.
                // Every event is one user's: on Citus, all on that user's worker, in its ids.
                try holder.executeScript(unsafeSQL: "BEGIN")
                try append(holder, "held-1")
                let held = try holder.query("SELECT tx::text AS x FROM ledger.events WHERE stream = 'test:held-1'")[0]
                    .decode("x", as: String.self)
                // Sixteen transactions of one event each commit meanwhile, with greater ids.
                for n in 1...16 { try append(writer, "w\(n)") }
                var follower = CatchUpReader(batchSize: 3)
                #expect(try follower.next(on: reader).isEmpty, "read an event of a transaction younger than an open one")
                try append(holder, "held-2")
                try holder.executeScript(unsafeSQL: "COMMIT")

                // What the reader must return: every event, in (tx, position) order, sorted here as numbers.
                let all = try reader.query("SELECT tx::text AS tx_text, position FROM ledger.events")
                    .map { row -> CatchUpReader.Checkpoint in
                        let text = try row.decode("tx_text", as: String.self)
                        guard let tx = UInt64(text) else { throw TestSetupError("tx \(text) is not a number") }
                        return CatchUpReader.Checkpoint(transaction: tx, position: try row.decode("position"))
                    }
                    .sorted()
                try #require(all.count == 18)
                try #require(all.first!.transaction < 10_000_000 && all.last!.transaction >= 10_000_000,
                             "the events do not straddle 10,000,000: \(all.map(\.transaction))")
                // Nothing else runs on this cluster: once the holder has committed, every event is
                // final (on Citus, once its recovery has seen every 2PC committed on the workers:
                // every second here).
                let maxTx = try reader.query("SELECT max(tx)::text AS t FROM ledger.events")[0].decode("t", as: String.self)
                let group = Int(all[0].position >> CatchUpReader.groupShift)
                let horizon = { try CatchUpReader.horizons(on: reader).first { $0.group == group }?.horizon ?? 0 }
                let deadline = Date().addingTimeInterval(60)
                while try horizon() <= UInt64(maxTx)!, Date() < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                try #require(try horizon() > UInt64(maxTx)!, "the horizon stays at or below \(maxTx)")

                var read: [CatchUpReader.Checkpoint] = []
                while true {
                    let batch = try follower.next(on: reader)
                    if batch.isEmpty || read.count > 2 * all.count { break }
                    read += batch.map(\.checkpoint)
                }
                let missing = all.filter { !read.contains($0) }
                let doubled = Dictionary(grouping: read, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
                #expect(missing.isEmpty, "never read: \(missing.map(describe))")
                #expect(doubled.isEmpty, "read twice: \(doubled.map(describe))")
                #expect(read == all, "read in this order: \(read.map(describe))")
                #expect(follower.checkpoint(group: group) == all.last)
                // The holder's two events come together, in position order, before every writer's.
                #expect(read.prefix(2).map { String($0.transaction) } == [held, held])

                // The feed (`GET /v1/events`) addresses the same order by plain positions: each
                // page continues after the event at `next`, whose transaction sits on either side
                // of 10,000,000.
                let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 2)
                var paged: [Int64] = []
                var after: Int64 = 0
                while paged.count <= 2 * all.count {
                    let page = try await ledger.events(after: after, limit: 3)
                    if page.events.isEmpty { #expect(page.next == after); break }
                    paged += page.events.map(\.position)
                    after = page.next
                }
                await ledger.close()
                #expect(paged == all.map(\.position), "the feed's pages: \(paged)")
            }
        }
    }
}

private func describe(_ checkpoint: CatchUpReader.Checkpoint) -> String {
    "(tx \(checkpoint.transaction), position \(checkpoint.position))"
}

/// Appends one test event with `ledger.append`, in the caller's transaction if one is open,
/// owned by the user `u-xid` (on Citus, that user's worker holds them all, in its ids).
private func append(_ c: Connection, _ name: String) throws {
    try c.query("""
        SELECT ledger.append('test:' || \(name)::text, 'TestEvent', jsonb_build_object('n', \(name)::text), now(),
                             NULL, 'u-xid')
        """)
}
