import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

extension HeavyReliabilityTests {
    /// The reader returns an event only once every transaction older than it has ended, and
    /// `pg_snapshot_xmin` is the whole server's: any write transaction anywhere holds every reader
    /// back. On the shared test server another suite's long transaction did (a CI run waited past
    /// these tests' deadline), so they run on a cluster of their own, where only they write.
    @Suite("Catch-up reader on a cluster of its own")
    struct CatchUpReaderHorizon {
        @Test func aReaderWaitsForAnOlderOpenTransactionInsteadOfSkippingItsEvent() async throws {
            try await PrivateCluster.with { cluster in
                let slow = try cluster.connect(), fast = try cluster.connect(), reader = try cluster.connect()
                defer { [slow, fast, reader].forEach { $0.close() } }
                try slow.executeScript(unsafeSQL: "BEGIN")
                let first = try append(slow, "a")
                let second = try append(fast, "b")  // commits at once, with a greater position
                #expect(first < second)
                // A reader by position would return `second` now, move past `first`, and never see it.
                #expect(try fast.count("SELECT count(*) FROM ledger.events WHERE position > 0") == 1)
                var follower = CatchUpReader()
                #expect(try follower.next(on: reader).isEmpty)
                try slow.executeScript(unsafeSQL: "COMMIT")
                // Nothing else writes on this cluster: once `slow` committed, both events are final.
                var events: [CatchUpReader.Event] = []
                let deadline = Date().addingTimeInterval(120)
                while events.count < 2, Date() < deadline {
                    events += try follower.next(on: reader)
                    if events.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
                }
                let holders = events.count == 2 ? "" : try horizonHolders(reader)
                try #require(events.count == 2, "held back by: \(holders)")
                #expect(events.map(\.position) == [first, second])
                #expect(events.map(\.stream) == ["test:a", "test:b"] && events[0].type == "TestEvent")
                #expect(try follower.next(on: reader).isEmpty)
                #expect(follower.checkpoint == events[1].checkpoint)
                // Resuming from a stored checkpoint continues after it.
                var resumed = CatchUpReader(after: events[0].checkpoint)
                #expect(try resumed.next(on: reader).map(\.position) == [second])
            }
        }

        @Test func aReaderFollowingEightWritersSeesEveryEventExactlyOnce() async throws {
            try await PrivateCluster.with { cluster in
                // Eight writers, 40 transactions each of one to three events, some holding their
                // transaction open a moment after appending, so that commits overtake positions.
                let writers = (0..<8).map { writer in
                    Background {
                        let c = try cluster.connect()
                        defer { c.close() }
                        for t in 0..<40 {
                            try c.transaction { tx in
                                for e in 0..<(1 + (writer + t) % 3) { _ = try append(tx, "w\(writer)-\(t)-\(e)") }
                                if (writer * 7 + t) % 4 == 0 { try tx.execute("SELECT pg_sleep(0.002 * \(writer % 3 + 1))") }
                            }
                        }
                    }
                }
                let reader = try cluster.connect()
                defer { reader.close() }
                // The library's feed follows them too, beside the reader, as an AsyncSequence.
                let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 2)
                let expected = (0..<8).reduce(0) { sum, w in sum + (0..<40).reduce(0) { $0 + 1 + (w + $1) % 3 } }
                let fed = Task {
                    var positions: [Int64] = []
                    for try await event in ledger.eventFeed(batchSize: 10, pollInterval: .milliseconds(2)) {
                        positions.append(event.position)
                        if positions.count == expected { break }
                    }
                    return positions
                }
                var follower = CatchUpReader(batchSize: 25)
                var seen: [Int64] = []
                let deadline = Date().addingTimeInterval(120)
                // Read while they write.
                while Date() < deadline, !writers.allSatisfy(\.isFinished) {
                    let batch = try follower.next(on: reader)
                    seen += batch.map(\.position)
                    if batch.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
                }
                // Then what is left, once every writer committed.
                for writer in writers { _ = try await writer.value() }
                let total = try reader.count("SELECT count(*) FROM ledger.events")
                while seen.count < total, Date() < deadline {
                    let batch = try follower.next(on: reader)
                    seen += batch.map(\.position)
                    if batch.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
                }
                // Never a skip: what was read is exactly every event up to the checkpoint.
                let checkpoint = follower.checkpoint
                let upToCheckpoint = try reader.query("""
                    SELECT position FROM ledger.events
                     WHERE (tx, position) <= (\(String(checkpoint.transaction))::xid8, \(checkpoint.position)::bigint)
                     ORDER BY position
                    """).map { try $0.decode(0, as: Int64.self) }
                #expect(seen.sorted() == upToCheckpoint, "an event before the checkpoint was skipped")
                let all = try reader.query("SELECT position FROM ledger.events ORDER BY position").map { try $0.decode(0, as: Int64.self) }
                #expect(all.count == (0..<8).reduce(0) { sum, w in sum + (0..<40).reduce(0) { $0 + 1 + (w + $1) % 3 } })
                let holders = seen.count == all.count ? "" : try horizonHolders(reader)
                #expect(seen.count == all.count, "read \(seen.count) of \(all.count); held back by: \(holders)")
                #expect(Set(seen).count == seen.count, "an event was read twice")
                #expect(seen.sorted() == all)

                // The feed: the same events, once each, in the reader's order (one reader's
                // batches come in (tx, position) order, so both orders are the same).
                let watchdog = Task { try await Task.sleep(for: .seconds(120)); fed.cancel() }
                let feedPositions = try await fed.value
                watchdog.cancel()
                await ledger.close()
                #expect(feedPositions.count == all.count, "the feed yielded \(feedPositions.count) of \(all.count)")
                #expect(feedPositions == seen, "the feed's order differs from the reader's")
            }
        }
    }
}

/// The write transactions that hold `pg_snapshot_xmin` back, for a failure message.
private func horizonHolders(_ c: Connection) throws -> String {
    try c.query("""
        SELECT coalesce(string_agg(format('%s %s (%s, %s)', datname, application_name, now() - xact_start, left(query, 40)), '; '), 'nothing') AS h
          FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
        """)[0].decode("h", as: String.self)
}

/// Appends one test event with `ledger.append` (in the caller's transaction, if one is open).
@discardableResult
private func append(_ c: Connection, _ name: String) throws -> Int64 {
    try c.query("""
        SELECT ledger.append('test:' || \(name)::text, 'TestEvent', jsonb_build_object('n', \(name)::text), now()) AS p
        """)[0].decode("p", as: Int64.self)
}
