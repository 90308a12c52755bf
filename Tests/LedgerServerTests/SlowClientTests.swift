import Dispatch
import Foundation
import LedgerServer
import LedgerTestSupport
import Synchronization
import Testing

extension LedgerServerTests {
    /// Clients that send slowly: the request timeout and the webhooks' share of the concurrency
    /// limit.
    @Suite("ledger serve: slow clients")
    struct SlowClientTests {
        /// With the default settings: 260 connections trickle a body to `/notifications/apple`
        /// (no key needed) one byte every 2 s, which keeps resetting the idle timer, and one more
        /// trickles a head that never ends. A writer is answered at once all the same (the
        /// webhooks have their own quarter of the 256 slots), and every slow request is cut off,
        /// 408 in JSON where it holds a slot, once the server has waited 30 s for it.
        @Test func slowWebhookBodiesCannotTakeTheWritersSlotsAndAreCutOffAfterTheRequestTimeout() async throws {
            try await ServerHarness.with { server in
                let writer = try server.key(.writer)
                let events = "SELECT count(*) FROM ledger.events"
                let before = try server.database.withConnection { try $0.count(events) }
                let head = "POST /notifications/apple HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
                let bodies = try (0..<260).map { _ in try RawConnection.open(port: server.port) }
                let slowHead = try RawConnection.open(port: server.port)
                let start = Date()
                for connection in bodies { connection.sendAll(head) }
                slowHead.sendAll("POST /notifications/apple HTTP/1.1\r\nHost: localhost\r\n")
                let trickling = Atomic<Bool>(true)
                let trickle = Task {
                    await RawConnection.blocking {
                        var n = 0
                        while trickling.load(ordering: .relaxed) {
                            Thread.sleep(forTimeInterval: 2)
                            n += 1
                            for connection in bodies { connection.sendAll(" ") }
                            slowHead.sendAll("X-Slow-\(n): 1\r\n")
                        }
                    }
                }
                defer { trickling.store(false, ordering: .relaxed) }
                try await Task.sleep(for: .seconds(2))

                let clock = ContinuousClock.now
                let purchase = try await server.send("POST", "/v1/purchases", key: writer, body: Fixture.purchaseLine(["type": nil]))
                #expect(purchase.status == 200, "a writer was answered \(purchase.status) \(purchase.text)")
                #expect(ContinuousClock.now - clock < .seconds(5))

                // Every slow connection is answered and closed within the request timeout of
                // waiting, and not long after.
                var slow = bodies
                slow.append(slowHead)
                var closedAfter: [Double] = []
                for connection in slow {
                    let (closed, _) = await connection.waitForClose(timeout: 45 - Date().timeIntervalSince(start))
                    #expect(closed)
                    closedAfter.append(Date().timeIntervalSince(start))
                }
                trickling.store(false, ordering: .relaxed)
                await trickle.value
                let answers = bodies.map { RawResponse($0.text) }
                let timedOut = answers.filter { $0?.status == 408 }
                let overloaded = answers.filter { $0?.status == 503 }
                // The webhooks' share, a quarter of 256, held the slow bodies; the rest were refused at once.
                #expect(timedOut.count == 64 && overloaded.count == 196, "408: \(timedOut.count), 503: \(overloaded.count)")
                #expect(timedOut.allSatisfy { $0?.json["code"] as? String == "REQUEST_TIMEOUT" && $0?.headers["content-type"] == "application/json" })
                #expect(overloaded.allSatisfy { $0?.json["code"] as? String == "OVERLOADED" })
                let headAnswer = RawResponse(slowHead.text)
                #expect(headAnswer?.status == 408 && headAnswer?.json["code"] as? String == "REQUEST_TIMEOUT", "\(slowHead.text)")
                #expect(closedAfter.allSatisfy { $0 > 29 && $0 < 40 }, "closed after \(closedAfter.min() ?? 0)...\(closedAfter.max() ?? 0) s")
                let log = server.log.all.filter { $0.contains("route=/notifications/apple") && $0.contains("status=408") }
                #expect(log.count == 64)

                // Nothing but the writer's purchase was written.
                #expect(try server.database.withConnection { try $0.count(events) } == before + 1)
            }
        }

        /// A keep-alive connection idle between requests is the idle timeout's: it outlives the
        /// request timeout and serves the next request.
        @Test func anIdleKeepAliveConnectionOutlivesTheRequestTimeout() async throws {
            try await ServerHarness.with({ $0.requestTimeout = .seconds(1) }) { server in
                let connection = try RawConnection.open(port: server.port)
                #expect(await connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                #expect(try await connection.response().status == 200)
                try await Task.sleep(for: .milliseconds(2500))
                connection.clear()
                #expect(await connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                #expect(try await connection.response().status == 200)
            }
        }

        /// A body sent a byte at a time to a keyed route is answered 408 in JSON once the server
        /// has waited the request timeout for it; the request log says 408; nothing is written.
        @Test func aSlowBodyIs408InJSONAndLoggedAndWritesNothing() async throws {
            try await ServerHarness.with({ $0.requestTimeout = .seconds(2) }) { server in
                let writer = try server.key(.writer)
                let before = try server.snapshot()
                let body = Array(Fixture.purchaseLine(["type": nil]).utf8)
                let connection = try RawConnection.open(port: server.port)
                connection.sendAll("POST /v1/purchases HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(writer)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n")
                let start = Date()
                let trickle = Task {
                    for byte in body.dropLast() {
                        guard await connection.send([byte]) else { return }
                        try? await Task.sleep(for: .milliseconds(300))
                    }
                }
                let (closed, _) = await connection.waitForClose(timeout: 10)
                let elapsed = Date().timeIntervalSince(start)
                trickle.cancel()
                #expect(closed && elapsed > 1.8 && elapsed < 5, "closed: \(closed) after \(elapsed) s")
                let answer = try #require(RawResponse(connection.text), "\(connection.text)")
                #expect(answer.status == 408 && answer.json["code"] as? String == "REQUEST_TIMEOUT")
                #expect((answer.json["message"] as? String)?.contains("2 s") == true)
                // The request's log line is written as the response goes out, which may be just
                // after the client sees the connection close.
                let logged = { server.log.all.contains { $0.contains("route=/v1/purchases") && $0.contains("status=408") } }
                let deadline = Date().addingTimeInterval(10)
                while !logged(), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
                #expect(logged())
                #expect(try server.snapshot() == before)
            }
        }

        @Test func aRequestTimeoutOutOfRangeStopsServeNamingIt() throws {
            let out = try LedgerProcess.run(["serve", "--request-timeout", "0", "--database-url", "host=/nonexistent"])
            #expect(out.status == 2)
            #expect(out.stderr.contains("LEDGER_HTTP_REQUEST_TIMEOUT"))
        }

        /// A head that never ends is answered 408 after the request timeout, though it is shorter
        /// than the idle timeout.
        @Test func aSlowHeadIs408AfterTheRequestTimeout() async throws {
            try await ServerHarness.with({ $0.requestTimeout = .seconds(2) }) { server in
                let connection = try RawConnection.open(port: server.port)
                connection.sendAll("GET /healthz HTTP/1.1\r\n")
                let start = Date()
                let trickle = Task {
                    for n in 0..<100 {
                        guard await connection.send("X-Slow-\(n): 1\r\n") else { return }
                        try? await Task.sleep(for: .milliseconds(300))
                    }
                }
                let (closed, _) = await connection.waitForClose(timeout: 10)
                let elapsed = Date().timeIntervalSince(start)
                trickle.cancel()
                #expect(closed && elapsed > 1.8 && elapsed < 5, "closed: \(closed) after \(elapsed) s")
                #expect(RawResponse(connection.text)?.status == 408, "\(connection.text)")
            }
        }
    }
}
