import Foundation
import LedgerTestSupport
import Synchronization
import Testing

extension LedgerServerTests {
    /// `GET /v1/events`: the log as pages in the catch-up reader's order, long-polled.
    ///
    /// The reader's horizon is the whole server's: an event is final once every transaction older
    /// than it has ended, in any database. On the shared test server another suite's transaction
    /// can hold an event back for minutes on a loaded machine, so these tests ask again until a
    /// generous deadline instead of expecting every event on the first page, and the waiting
    /// test starts once its first event is final.
    @Suite("ledger serve: the event feed")
    struct EventRouteTests {
        static let lines = (1...5).map { n in
            Fixture.purchaseLine(["paymentSeq": "\"P-\(n)\"", "transactionId": "\"T-\(n)\"", "purchaseToken": "\"tok-\(n)\""])
        }

        @Test func pagesFollowOneAnotherThroughEveryEventInTheReadersOrder() async throws {
            try await ServerHarness.with { server in
                try server.database.withConnection { _ = try $0.ingest(Self.lines) }
                let expected = try server.database.withConnection { c in
                    try c.query("SELECT position FROM ledger.events ORDER BY tx, position").map { try $0.decode(0, as: Int64.self) }
                }
                try #require(expected.count == 5)
                let reader = try server.key(.reader)
                var positions: [Int64] = [], types: [String] = [], after: Int64 = 0
                let deadline = Date().addingTimeInterval(600)
                while positions.count < expected.count, Date() < deadline {
                    let page = try await server.send("GET", "/v1/events?after=\(after)&limit=2", key: reader)
                    #expect(page.status == 200)
                    let events = page.json["events"] as? [[String: Any]] ?? []
                    #expect(events.count <= 2)
                    positions += events.compactMap { ($0["position"] as? NSNumber)?.int64Value }
                    types += events.compactMap { $0["type"] as? String }
                    let next = try #require((page.json["next"] as? NSNumber)?.int64Value)
                    #expect(next == positions.last ?? 0)
                    // One server, one node group: the cursor is that position.
                    #expect(page.json["cursor"] as? String == String(next))
                    after = next
                    if events.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(positions == expected)
                #expect(types == Array(repeating: "PurchaseRecorded", count: 5))

                // One event as the feed shows it: its data in the contract's names, times in UTC.
                let first = try await server.send("GET", "/v1/events?limit=1", key: reader)
                let event = try #require((first.json["events"] as? [[String: Any]])?.first)
                #expect(event["stream"] as? String == "payment:P-1")
                #expect(event["version"] as? Int == 1)
                let data = try #require(event["data"] as? [String: Any])
                #expect(data["paymentSeq"] as? String == "P-1" && data["userId"] as? String == "u1")
                #expect(data["purchaseTime"] as? String == "2026-01-01T00:00:00.000000Z")
                #expect((event["occurredAt"] as? String)?.hasSuffix("Z") == true)

                // After the last event, without waiting: an empty page that points at the same place.
                let end = try await server.send("GET", "/v1/events?after=\(after)", key: reader)
                #expect(end.status == 200)
                #expect((end.json["events"] as? [Any])?.isEmpty == true)
                #expect((end.json["next"] as? NSNumber)?.int64Value == after)
            }
        }

        @Test func aWaitingRequestAnswersWithTheEventAppendedWhileItWaits() async throws {
            try await ServerHarness.with { server in
                try server.database.withConnection { _ = try $0.ingest([Self.lines[0]]) }
                let last = try server.database.withConnection { try $0.query("SELECT max(position) FROM ledger.events")[0].decode(0, as: Int64.self) }
                let reader = try server.key(.reader)
                // Nothing holds the horizon back once the first event is final.
                var first = try await server.send("GET", "/v1/events", key: reader)
                let deadline = Date().addingTimeInterval(600)
                while (first.json["events"] as? [Any])?.isEmpty != false, Date() < deadline {
                    try await Task.sleep(for: .milliseconds(100))
                    first = try await server.send("GET", "/v1/events", key: reader)
                }
                try #require((first.json["events"] as? [Any])?.count == 1)
                let port = server.port
                let started = ContinuousClock.now
                let waiting = Task {
                    try await HTTP.send("GET", "http://127.0.0.1:\(port)/v1/events?after=\(last)&wait=60", key: reader)
                }
                // The request counts as a waiting feed client until it answers.
                var gauge = ""
                while !gauge.contains("ledger_feed_clients_waiting 1"), Date() < deadline {
                    gauge = try await server.send("GET", "/metrics").text
                    if !gauge.contains("ledger_feed_clients_waiting 1") { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(gauge.contains("ledger_feed_clients_waiting 1"))
                try server.database.withConnection { _ = try $0.ingest([Self.lines[1]]) }
                let reply = try await waiting.value
                #expect(reply.status == 200)
                let events = reply.json["events"] as? [[String: Any]] ?? []
                #expect(events.map { $0["stream"] as? String } == ["payment:P-2"])
                // It answered when the event came, not when its 60 seconds were up (the bound is
                // loose: it only tells a look every so often from one look at the end).
                #expect(ContinuousClock.now - started < .seconds(50))
                #expect(try await server.send("GET", "/metrics").text.contains("ledger_feed_clients_waiting 0"))
            }
        }

        @Test func aWaitingRequestAnswersAnEmptyPageWhenTheServerStops() async throws {
            let started = ContinuousClock.now
            let handoff = Mutex<(Task<Reply, any Error>, Int64)?>(nil)
            try await ServerHarness.with { server in
                try server.database.withConnection { _ = try $0.ingest([Self.lines[0]]) }
                let last = try server.database.withConnection { try $0.query("SELECT max(position) FROM ledger.events")[0].decode(0, as: Int64.self) }
                let url = "http://127.0.0.1:\(server.port)/v1/events?after=\(last)&wait=60"
                let key = try server.key(.reader)
                let waiting = Task { try await HTTP.send("GET", url, key: key) }
                let deadline = Date().addingTimeInterval(30)
                while Date() < deadline, !(try await server.send("GET", "/metrics").text.contains("ledger_feed_clients_waiting 1")) {
                    try await Task.sleep(for: .milliseconds(20))
                }
                handoff.withLock { $0 = (waiting, last) }
            }
            // The harness stopped the server (SIGTERM's graceful shutdown) on leaving its block.
            let waiting = try #require(handoff.withLock { $0 })
            let reply = try await waiting.0.value
            #expect(reply.status == 200)
            #expect((reply.json["events"] as? [Any])?.isEmpty == true)
            #expect((reply.json["next"] as? NSNumber)?.int64Value == waiting.1)
            // It answered when the shutdown began, not when its 60 seconds were up.
            #expect(ContinuousClock.now - started < .seconds(50))
        }

        @Test(arguments: [
            ("after=-1", "after"), ("after=first", "after"), ("after=999999999", "after"),
            ("after=1,2", "after"), ("after=1,", "after"), ("after=%2B1", "after"), ("after=1,281474976710657", "after"),
            ("limit=0", "limit"), ("limit=1001", "limit"), ("wait=61", "wait"), ("wait=1.5", "wait"),
        ])
        func aBadParameterIs400NamingIt(query: String, parameter: String) async throws {
            try await ServerHarness.with { server in
                let before = try server.snapshot()
                let reply = try await server.send("GET", "/v1/events?\(query)", key: try server.key(.reader))
                #expect(reply.status == 400 && reply.code == "INVALID_INPUT")
                #expect(reply.message.hasPrefix(parameter + ":"), "\(reply.message)")
                #expect(try server.snapshot() == before)
            }
        }

        @Test func theFeedNeedsAReaderOrWriterKey() async throws {
            try await ServerHarness.with { server in
                let none = try await server.send("GET", "/v1/events")
                let unknown = try await server.send("GET", "/v1/events", key: "not-a-key")
                let writer = try await server.send("GET", "/v1/events", key: try server.key(.writer))
                #expect(none.status == 401 && unknown.status == 401)
                #expect(writer.status == 200)
            }
        }
    }
}
