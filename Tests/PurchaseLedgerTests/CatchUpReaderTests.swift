import Foundation
import LedgerJSON
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("Catch-up reader")
struct CatchUpReaderTests {
    /// The reader's own statement, planned as the server plans it for the reader's prepared
    /// statement (custom and generic plans): a limit over one forward scan of the (tx, position)
    /// index, which already returns the rows in the order asked for, with no sort (ordered by a
    /// text output column named `tx`, the whole range would be sorted by text).
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

                let horizon = try CatchUpReader.horizon(on: c)
                let text = CatchUpReader.query(after: .start, below: horizon, limit: 1).text
                try c.executeScript(unsafeSQL: "PREPARE catch_up_read AS \(text)")
                // A reader that keeps up asks for a small share of what lies after its checkpoint:
                // that plan must be the index scan. When a limit covers half of what remains
                // (1,000 of 2,000), a bitmap scan and a sort of the xid8 column is the planner's
                // fair choice (a CI run got it), so there only the sort key is checked.
                for (checkpoint, limit) in [(CatchUpReader.Checkpoint.start, 100), (.start, 10), (halfWay, 100), (halfWay, 10),
                                            (.start, 1000), (halfWay, 1000)] {
                    let query = CatchUpReader.query(after: checkpoint, below: horizon, limit: limit)
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
                        #expect(nodes.allSatisfy { $0.sortKey.isEmpty || $0.sortKey == ["tx", "\"position\""] },
                                "a sort by anything but the xid8 column and the position: \(context)")
                        guard limit <= 100 else { continue }
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

    /// Each event read carries its owner (`ledger.events.user_id`), and the feed's JSON shows it as
    /// `userId`, left out for a fact without a user (EventOwnerTests has the rule itself).
    @Test func eachEventCarriesItsOwnerAndTheFeedShowsIt() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = try c.ingest([
                    #"{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE"}"#,
                    #"{"type":"accountLink","userId":"u-r","storeCode":"AS","appAccountToken":"acct-r"}"#,
                ])
                #expect(outcomes.map(\.status) == [.recorded, .recorded])
                // The reader returns what no open transaction of the cluster can precede: this
                // process's other suites (a statement being cancelled, a replica's reads) may hold
                // it back a while.
                var reader = CatchUpReader()
                var events: [CatchUpReader.Event] = []
                let deadline = Date().addingTimeInterval(60)
                while events.count < 2 && Date() < deadline {
                    events += try reader.next(on: c)
                    if events.count < 2 { Thread.sleep(forTimeInterval: 0.05) }
                }
                #expect(events.map(\.type) == ["ProductDeclared", "AccountLinked"])
                #expect(events.map(\.userId) == [nil, "u-r"])
                var json = JSONWriter()
                try #require(events.first).write(into: &json)
                #expect(!json.string.contains("userId"), "\(json.string)")
                json = JSONWriter()
                try #require(events.last).write(into: &json)
                #expect(json.string.hasSuffix(#","userId":"u-r"}"#), "\(json.string)")
            }
        }
    }
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
