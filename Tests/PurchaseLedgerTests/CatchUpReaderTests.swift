import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("Catch-up reader")
struct CatchUpReaderTests {
    @Test func aReaderWaitsForAnOlderOpenTransactionInsteadOfSkippingItsEvent() async throws {
        try await TestDatabase.with { db in
            let slow = try db.connect(), fast = try db.connect(), reader = try db.connect()
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
            // (Write transactions anywhere on the server hold every reader back until they end.)
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
        try await TestDatabase.with { db in
            // Eight writers, 40 transactions each of one to three events, some holding their
            // transaction open a moment after appending, so that commits overtake positions.
            let writers = (0..<8).map { writer in
                Background {
                    try db.withConnection { c in
                        for t in 0..<40 {
                            try c.transaction { tx in
                                for e in 0..<(1 + (writer + t) % 3) { _ = try append(tx, "w\(writer)-\(t)-\(e)") }
                                if (writer * 7 + t) % 4 == 0 { try tx.execute("SELECT pg_sleep(0.002 * \(writer % 3 + 1))") }
                            }
                        }
                    }
                }
            }
            let reader = try db.connect()
            defer { reader.close() }
            var follower = CatchUpReader(batchSize: 25)
            var seen: [Int64] = []
            let deadline = Date().addingTimeInterval(120)
            // Read while they write.
            while Date() < deadline, !writers.allSatisfy(\.isFinished) {
                let batch = try follower.next(on: reader)
                seen += batch.map(\.position)
                if batch.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
            }
            // Then what is left: every writer committed, but write transactions elsewhere on the
            // server (other tests) hold every reader back until they end.
            let total = try reader.count("SELECT count(*) FROM ledger.events")
            while seen.count < total, Date() < deadline {
                let batch = try follower.next(on: reader)
                seen += batch.map(\.position)
                if batch.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            }
            for writer in writers { _ = try await writer.value() }
            // Other suites' write transactions on the shared server may hold the horizon back
            // for a long time on a loaded machine: keep reading until all is read, within bounds.
            let finish = Date().addingTimeInterval(300)
            while seen.count < total, Date() < finish {
                let batch = try follower.next(on: reader)
                seen += batch.map(\.position)
                if batch.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
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
        }
    }

    /// The reader's own statement, planned as the server plans it for the reader's prepared
    /// statement (custom and generic plans): a limit over one forward scan of the (tx, position)
    /// index, which already returns the rows in the order asked for, with no sort. (Issue #15:
    /// ordering by a text output column named `tx` sorted the whole range by text.)
    @Test func theReadersQueryIsOneIndexRangeScanOfTxPositionWithNoSort() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c in
                // 4,000 events in 1,000 transactions, analysed: enough rows that the plan shows the
                // order the statement asks for rather than a sort of a handful of rows.
                try c.executeScript(unsafeSQL: """
                    DO $fill$
                    BEGIN
                        FOR t IN 1..1000 LOOP
                            PERFORM ledger.append('test:' || (t % 40), 'TestEvent', jsonb_build_object('t', t, 'e', e), now())
                               FROM generate_series(1, 4) e;
                            COMMIT;
                        END LOOP;
                    END
                    $fill$
                    """)
                try c.executeScript(unsafeSQL: "ANALYZE ledger.events")
                let middle = try c.query("SELECT tx::text AS tx_text, position FROM ledger.events ORDER BY position OFFSET 2000 LIMIT 1")[0]
                let halfWay = CatchUpReader.Checkpoint(
                    transaction: try #require(UInt64(try middle.decode("tx_text", as: String.self))),
                    position: try middle.decode("position"))

                let text = CatchUpReader.query(after: .start, limit: 1).text
                try c.executeScript(unsafeSQL: "PREPARE catch_up_read AS \(text)")
                for (checkpoint, limit) in [(CatchUpReader.Checkpoint.start, 1000), (.start, 10), (halfWay, 1000), (halfWay, 10)] {
                    let query = CatchUpReader.query(after: checkpoint, limit: limit)
                    #expect(query.text == text)
                    let arguments = try query.bindings.map { value -> String in
                        guard case .text(let literal) = value else { throw TestSetupError("unexpected binding \(value)") }
                        return "'" + literal.replacing("'", with: "''") + "'"
                    }
                    for mode in ["force_custom_plan", "force_generic_plan"] {
                        try c.executeScript(unsafeSQL: "SET plan_cache_mode = \(mode)")
                        let json = try c.query(SQL(unsafeSQL: """
                            EXPLAIN (FORMAT JSON) EXECUTE catch_up_read(\(arguments.joined(separator: ", ")))
                            """))[0].decode(0, as: String.self)
                        let nodes = try planNodes(json)
                        let plan = nodes.map(\.summary).joined(separator: " > ")
                        let context = "\(mode), after \(checkpoint), limit \(limit): \(plan)"
                        #expect(!nodes.contains { $0.type.contains("Sort") }, "a sort: \(context)")
                        #expect(nodes.map(\.type) == ["Limit", "Index Scan"], "not one index scan: \(context)")
                        #expect(nodes.last?.index == "events_tx_position_idx" && nodes.last?.direction == "Forward",
                                "not the (tx, position) index, forward: \(context)")
                    }
                }
                try c.executeScript(unsafeSQL: "DEALLOCATE catch_up_read; RESET plan_cache_mode")
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

/// One node of an `EXPLAIN (FORMAT JSON)` plan.
private struct PlanNode {
    var type: String
    var index: String?
    var direction: String?
    var sortKey: [String]

    var summary: String {
        type + (index.map { " using \($0)" } ?? "") + (sortKey.isEmpty ? "" : " by \(sortKey.joined(separator: ", "))")
    }
}

/// The nodes of an `EXPLAIN (FORMAT JSON)` plan, depth first from the top.
private func planNodes(_ json: String) throws -> [PlanNode] {
    let document = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]
    guard let top = document?.first?["Plan"] as? [String: Any] else { throw TestSetupError("no plan in \(json)") }
    func walk(_ node: [String: Any]) -> [PlanNode] {
        [PlanNode(type: node["Node Type"] as? String ?? "?", index: node["Index Name"] as? String,
                  direction: node["Scan Direction"] as? String, sortKey: node["Sort Key"] as? [String] ?? [])]
            + (node["Plans"] as? [[String: Any]] ?? []).flatMap(walk)
    }
    return walk(top)
}
