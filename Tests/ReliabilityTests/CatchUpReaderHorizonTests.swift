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
    ///
    /// `scripts/dev test` runs them a second time on a Citus coordinator with two workers of their
    /// own (LEDGER_TEST_CITUS=1). Their events belong to users spread over both workers, so that
    /// a transaction of several events is a 2PC there.
    @Suite("Catch-up reader on a cluster of its own")
    struct CatchUpReaderHorizon {
        @Test func aReaderWaitsForAnOlderOpenTransactionInsteadOfSkippingItsEvent() async throws {
            try await PrivateCluster.with(citus: PrivateCluster.citusAsked) { cluster in
                let slow = try cluster.connect(), fast = try cluster.connect(), reader = try cluster.connect()
                defer { [slow, fast, reader].forEach { $0.close() } }
                // One owner: on a Citus cluster both events are on its worker, in its node group.
                try slow.executeScript(unsafeSQL: "BEGIN")
                let first = try append(slow, "a", owner: "u-ab")
                let second = try append(fast, "b", owner: "u-ab")  // commits at once, with a greater position
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
                #expect(follower.checkpoint(group: events[1].checkpoint.group) == events[1].checkpoint)
                // Resuming from a stored checkpoint continues after it.
                var resumed = CatchUpReader(after: events[0].checkpoint)
                #expect(try resumed.next(on: reader).map(\.position) == [second])
            }
        }

        @Test func aReaderFollowingEightWritersSeesEveryEventExactlyOnce() async throws {
            try await PrivateCluster.with(citus: PrivateCluster.citusAsked) { cluster in
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
                // Never a skip: what was read is exactly every event up to the checkpoints, each
                // node group's (one server's one; a cluster's workers', each event in its owner's).
                let upToCheckpoint = try follower.checkpoints.flatMap { checkpoint in
                    try reader.query("""
                        SELECT position FROM ledger.events
                         WHERE position >> 48 = \(checkpoint.group)
                           AND (tx, position) <= (\(String(checkpoint.transaction))::xid8, \(checkpoint.position)::bigint)
                        """).map { try $0.decode(0, as: Int64.self) }
                }.sorted()
                #expect(seen.sorted() == upToCheckpoint, "an event before the checkpoint was skipped")
                let all = try reader.query("SELECT position FROM ledger.events ORDER BY position").map { try $0.decode(0, as: Int64.self) }
                #expect(all.count == (0..<8).reduce(0) { sum, w in sum + (0..<40).reduce(0) { $0 + 1 + (w + $1) % 3 } })
                let holders = seen.count == all.count ? "" : try horizonHolders(reader)
                #expect(seen.count == all.count, "read \(seen.count) of \(all.count); held back by: \(holders)")
                #expect(Set(seen).count == seen.count, "an event was read twice")
                #expect(seen.sorted() == all)

                // The feed: the same events, once each, in the reader's order within each node
                // group (one reader's batches come in (tx, position) order within a group, so both
                // orders are the same there; they take a cluster's groups in turns of their own).
                let watchdog = Task { try await Task.sleep(for: .seconds(120)); fed.cancel() }
                let feedPositions = try await fed.value
                watchdog.cancel()
                await ledger.close()
                #expect(feedPositions.count == all.count, "the feed yielded \(feedPositions.count) of \(all.count)")
                let byGroup = { (positions: [Int64]) in Dictionary(grouping: positions) { $0 >> CatchUpReader.groupShift } }
                #expect(byGroup(feedPositions) == byGroup(seen), "the feed's order differs from the reader's within a node group")
            }
        }

        /// On a Citus coordinator a transaction that wrote to two workers commits there first and
        /// then sends each worker COMMIT PREPARED: between the two, or until Citus's recovery
        /// after a crash, its `tx` is below the coordinator's xmin while its events are still
        /// invisible on a worker. The test makes that state, as Citus leaves it
        /// (`commitOnTheCoordinatorOnly`), and checks that the reader and the feed wait for it
        /// rather than read past it.
        /// Citus's own recovery (`recover_prepared_transactions()`, off until then) then commits
        /// it on the worker and removes the record, which shows the state is one Citus knows.
        /// The events are appended as a release before the appends on the owner's node appended
        /// them, each with the coordinator's transaction id (the column `tx` given its old
        /// default), the state a log distributed then may hold; the test below is today's.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func anEventCommittedOnTheCoordinatorAndStillPreparedOnAWorkerIsWaitedFor() async throws {
            try await PrivateCluster.with(settings: ["citus.recover_2pc_interval = -1"], citus: true) { cluster in
                let coordinator = try cluster.connect(), reader = try cluster.connect()
                defer { [coordinator, reader].forEach { $0.close() } }
                try coordinator.execute("ALTER TABLE ledger.events ALTER COLUMN tx SET DEFAULT pg_current_xact_id()")
                let before = try append(coordinator, "before")
                // The migration's and this append's 2PC records: cleared by Citus's recovery, which
                // is off (they would hold the readers back as well).
                _ = try coordinator.query("SELECT recover_prepared_transactions()")
                #expect(try coordinator.count("SELECT count(*) FROM pg_dist_transaction") == 0)
                let (position, tx) = try cluster.commitOnTheCoordinatorOnly(owner: "u-in-doubt", stream: "test:in-doubt",
                                                                       type: "TestEvent", data: #"{"n": "in-doubt"}"#)
                // A transaction after it commits on both nodes.
                let after = try append(coordinator, "after")

                // The coordinator's xmin is past the in-doubt transaction now; the event is not visible.
                #expect(try reader.query("SELECT pg_snapshot_xmin(pg_current_snapshot()) > \(tx)::xid8 AS past")[0].decode("past", as: Bool.self))
                try await Self.expectWaitedFor(position, before: before, after: after, cluster, coordinator, reader)
            }
        }

        /// The same state as a distributed log's appends make it today: the event appended on the
        /// worker that holds its owner's shard, with that worker's transaction id and a position
        /// of its range (`ledger.event_on_owner_node`), in a transaction prepared there and
        /// committed on the coordinator. The prepared transaction holds the worker's horizon
        /// below its id, so the reader and the feed read the owner's event before it, and wait
        /// for it and for the owner's event after it, which commits on both nodes at once; once
        /// Citus's recovery commits it on the worker, both come, in order.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func anEventStillPreparedOnItsOwnersWorkerIsWaitedFor() async throws {
            try await PrivateCluster.with(settings: ["citus.recover_2pc_interval = -1"], citus: true) { cluster in
                let coordinator = try cluster.connect(), reader = try cluster.connect()
                defer { [coordinator, reader].forEach { $0.close() } }
                let before = try append(coordinator, "before", owner: "u-in-doubt")
                let (position, tx) = try cluster.commitOnTheCoordinatorOnly(owner: "u-in-doubt", stream: "test:in-doubt",
                                                                       type: "TestEvent", data: #"{"n": "in-doubt"}"#,
                                                                       onTheOwnersNode: true)
                let after = try append(coordinator, "after", owner: "u-in-doubt")
                let group = Int(before >> CatchUpReader.groupShift)
                #expect(group > 0 && [position, after].allSatisfy { Int($0 >> CatchUpReader.groupShift) == group },
                        "the owner's events are not all in its worker's node group: \([before, position, after])")
                #expect(before < position && position < after)

                // The worker's horizon is not past the prepared transaction; the event is not visible.
                let horizon = try #require(try CatchUpReader.horizons(on: reader).first { $0.group == group }?.horizon)
                #expect(horizon <= (try #require(UInt64(tx))), "the worker's horizon \(horizon) is past the prepared \(tx)")
                try await Self.expectWaitedFor(position, before: before, after: after, cluster, coordinator, reader)
            }
        }

        /// The in-doubt event at `position`, between `before` and `after`: not visible; the reader
        /// and the feed return `before` alone; once Citus's recovery (off until then) commits it
        /// on its worker and removes the record, both return it and `after`, in that order.
        static func expectWaitedFor(_ position: Int64, before: Int64, after: Int64, _ cluster: PrivateCluster,
                                    _ coordinator: Connection, _ reader: Connection) async throws {
            #expect(try reader.count("SELECT count(*) FROM ledger.events WHERE position = \(position)") == 0)
            var follower = CatchUpReader()
            #expect(try follower.next(on: reader).map(\.position) == [before], "read past a transaction still prepared on a worker")
            let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 1)
            #expect(try await ledger.events(after: 0, limit: 10).events.map(\.position) == [before])

            #expect(try coordinator.query("SELECT recover_prepared_transactions() AS n")[0].decode("n", as: Int.self) == 1)
            #expect(try coordinator.count("SELECT count(*) FROM pg_dist_transaction") == 0)
            #expect(try follower.next(on: reader).map(\.position) == [position, after])
            #expect(try await ledger.events(after: before, limit: 10).events.map(\.position) == [position, after])
            await ledger.close()
        }

        /// Writers on every node of the cluster: the coordinator and both workers append, each
        /// event with the transaction id and a position of the worker that holds its owner's
        /// shard (node group g from g × 2^48 + 1, `ledger.event_on_owner_node`), whichever node
        /// ran its transaction. The reader keeps a checkpoint per node group,
        /// each below its node's horizon (`ledger.read_horizons()`); it, the feed and the webhooks'
        /// dispatcher, reading while they write, return every event once, in (tx, position) order
        /// within each group.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus cluster: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aReaderFollowingWritersOnEveryNodeSeesEachNodesEventsExactlyOnce() async throws {
            try await PrivateCluster.with(citus: true) { cluster in
                let reader = try cluster.connect()
                defer { reader.close() }
                let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 2)
                let (endpoint, _) = try await ledger.addWebhook(url: "http://127.0.0.1:9/unreachable")
                let nodes = [cluster] + cluster.workers
                try #require(nodes.count == 3)
                // Three writers a node, 20 transactions each of one to three events, some holding
                // their transaction open a moment, so that commits overtake positions on each node.
                let writers = nodes.enumerated().flatMap { n, node in
                    (0..<3).map { writer in
                        Background {
                            let c = try node.connect()
                            defer { c.close() }
                            for t in 0..<20 {
                                try c.transaction { tx in
                                    for e in 0..<(1 + (writer + t) % 3) { _ = try append(tx, "n\(n)-w\(writer)-\(t)-\(e)") }
                                    if (writer * 7 + t) % 4 == 0 { try tx.execute("SELECT pg_sleep(0.002 * \(writer + 1))") }
                                }
                            }
                        }
                    }
                }
                let expected = 3 * (0..<3).reduce(0) { sum, w in sum + (0..<20).reduce(0) { $0 + 1 + (w + $1) % 3 } }
                let fed = Task {
                    var events: [CatchUpReader.Event] = []
                    for try await event in ledger.eventFeed(batchSize: 10, pollInterval: .milliseconds(2)) {
                        events.append(event)
                        if events.count == expected { break }
                    }
                    return events
                }
                let dispatcher = WebhookDispatcher(ledger: ledger)
                var follower = CatchUpReader(batchSize: 25)
                var seen: [CatchUpReader.Event] = []
                let deadline = Date().addingTimeInterval(180)
                while Date() < deadline, !writers.allSatisfy(\.isFinished) {
                    let batch = try follower.next(on: reader)
                    seen += batch
                    try await dispatcher.dispatchAll()
                    if batch.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
                }
                for writer in writers { _ = try await writer.value() }
                let all = try reader.query("SELECT position FROM ledger.events ORDER BY position").map { try $0.decode(0, as: Int64.self) }
                #expect(all.count == expected)
                while seen.count < all.count, Date() < deadline {
                    let batch = try follower.next(on: reader)
                    seen += batch
                    if batch.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
                }
                try await dispatcher.dispatchAll()

                // Each event in its owner's worker's group, whichever node appended it.
                let groups = Dictionary(grouping: all) { $0 >> CatchUpReader.groupShift }
                #expect(groups.keys.sorted() == [1, 2], "events per node group: \(groups.mapValues(\.count))")
                #expect(try reader.count("""
                    SELECT count(*) FROM ledger.events e
                      JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('ledger.events', e.user_id)
                     WHERE e.position >> 48 = p.groupid
                    """) == expected, "an event is not in its owner's node group")
                // The reader: every event once, in (tx, position) order within each group.
                let positions = seen.map(\.position)
                #expect(Set(positions).count == positions.count, "an event was read twice")
                #expect(positions.sorted() == all, "read \(positions.count) of \(all.count)")
                for (group, events) in Dictionary(grouping: seen, by: { $0.position >> CatchUpReader.groupShift }) {
                    #expect(events.map(\.checkpoint) == events.map(\.checkpoint).sorted(), "group \(group) out of (tx, position) order")
                    #expect(follower.checkpoint(group: Int(group)) == events.last?.checkpoint)
                }
                #expect(follower.checkpoints.count == 2)
                // Nothing is left after it; the end of the log is where it stands.
                #expect(try follower.next(on: reader).isEmpty)
                #expect(try CatchUpReader.end(on: reader) == follower.checkpoints)

                // Each worker's horizon is asked of that worker by the route ledger.read_horizons
                // names (a key whose shard of the log it holds), which Citus sends there; in a
                // transaction block, where Citus runs the call on the coordinator, the reader asks
                // through run_command_on_workers instead, and reads the same.
                let routes = try reader.query("SELECT node_group, route FROM ledger.read_horizons() WHERE node_group <> 0")
                #expect(try routes.map { try $0.decode("node_group", as: Int.self) } == [1, 2])
                for row in routes {
                    let route = try #require(try row.decode("route", as: String?.self))
                    let answered = try reader.query("SELECT node_group FROM ledger.node_read_horizon(\(route))")[0]
                    #expect(try answered.decode("node_group", as: Int.self) == row.decode("node_group", as: Int.self), "route \(route)")
                    let inBlock = try reader.transaction { tx in
                        try tx.query("SELECT node_group FROM ledger.node_read_horizon(\(route))")[0].decode("node_group", as: Int.self)
                    }
                    #expect(inBlock == 0, "in a transaction block the call runs where it is made")
                }
                #expect(try reader.transaction { try CatchUpReader.horizons(on: $0).map(\.group) } == [0, 1, 2])
                #expect(try reader.transaction { try CatchUpReader.end(on: $0) } == follower.checkpoints)

                // The feed: the same events once each; its cursor, one position per group, resumes
                // with nothing left, and a cursor of group 1 alone reads group 2 again.
                let watchdog = Task { try await Task.sleep(for: .seconds(120)); fed.cancel() }
                let feedEvents = try await fed.value
                watchdog.cancel()
                #expect(feedEvents.map(\.position).sorted() == all, "the feed yielded \(feedEvents.count) of \(all.count)")
                let cursor = EventCursor.start.advanced(past: feedEvents)
                #expect(cursor == follower.cursor && cursor.positions.count == 2, "\(cursor)")
                #expect(try await ledger.events(after: cursor, limit: 10).events.isEmpty)
                let again = try await ledger.events(after: EventCursor(position: cursor.positions[0]), limit: 1000)
                #expect(again.events.map(\.position).sorted() == groups[2]!)
                #expect(again.cursor == cursor)

                // The webhooks: one delivery per event, none twice, and the endpoint's checkpoints
                // stored per group.
                let delivered = try reader.query("""
                    SELECT args->>'eventId' AS id FROM ledger.jobs
                     WHERE kind = 'webhook.delivery' AND args->>'endpoint' = \(String(endpoint.id))
                    """).map { try $0.decode("id", as: String.self) }
                #expect(delivered.count == all.count && Set(delivered) == Set(all.map { "event:\($0)" }),
                        "\(delivered.count) deliveries for \(all.count) events")
                let stored = try reader.query("""
                    SELECT checkpoint_position, worker_checkpoints::text AS w FROM ledger.webhook_endpoints WHERE id = \(endpoint.id)
                    """)[0]
                #expect(try stored.decode("checkpoint_position", as: Int64.self) == follower.checkpoint(group: 0).position)
                let workers = try stored.decode("w", as: String.self)
                #expect(workers.contains("\(follower.checkpoint(group: 1).position)") && workers.contains("\(follower.checkpoint(group: 2).position)"),
                        "worker_checkpoints: \(workers)")
                #expect(try await ledger.webhooks().map(\.cursor) == [follower.cursor])

                // A replay from a position of group 1 sends group 1's deliveries from there on, and
                // nothing of the other groups, whose positions are unrelated to it.
                try reader.execute("UPDATE ledger.jobs SET state = 'done', finished_at = now() WHERE kind = 'webhook.delivery'")
                let group1 = groups[1]!.sorted()
                let from = group1[group1.count / 2]
                #expect(try await ledger.replayWebhook(id: endpoint.id, from: EventCursor(parsing: String(from))) == group1.filter { $0 >= from }.count)
                let requeued = try reader.query("""
                    SELECT args->>'eventId' AS id FROM ledger.jobs WHERE kind = 'webhook.delivery' AND state <> 'done' ORDER BY 1
                    """).map { try $0.decode("id", as: String.self) }
                #expect(requeued == group1.filter { $0 >= from }.map { "event:\($0)" }.sorted())
                await ledger.close()
            }
        }
    }
}

/// The write transactions that hold the readers' horizon back, and on a Citus coordinator the
/// 2PC records that do, for a failure message.
private func horizonHolders(_ c: Connection) throws -> String {
    let running = try c.query("""
        SELECT coalesce(string_agg(format('%s %s (%s, %s)', datname, application_name, now() - xact_start, left(query, 40)), '; '), 'nothing') AS h
          FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
        """)[0].decode("h", as: String.self)
    guard try c.query("SELECT to_regclass('pg_catalog.pg_dist_transaction') IS NOT NULL AS citus")[0].decode("citus", as: Bool.self) else {
        return running
    }
    let records = try c.query("SELECT count(*) AS n, min(outer_xid)::text AS oldest FROM pg_dist_transaction")[0]
    return running + "; 2PC records: \(try records.decode("n", as: Int.self)) (oldest \(try records.decode("oldest", as: String?.self) ?? "none"))"
}

/// Appends one test event with `ledger.append` (in the caller's transaction, if one is open),
/// owned by `owner`, by default the user `u-` and its name: on a Citus cluster the events of a
/// transaction then land on either worker, each in its owner's node group.
@discardableResult
private func append(_ c: Connection, _ name: String, owner: String? = nil) throws -> Int64 {
    try c.query("""
        SELECT ledger.append('test:' || \(name)::text, 'TestEvent', jsonb_build_object('n', \(name)::text), now(),
                             NULL, \(owner ?? "u-\(name)")::text) AS p
        """)[0].decode("p", as: Int64.self)
}
