import Foundation
import LedgerServer
import LedgerTestSupport
import Postgres
import Testing

extension LedgerServerTests {
    /// `POST /v1/batch` reads its body as it arrives: lines are applied batch by batch while the
    /// rest is still coming, and the server holds a line and a batch, never the whole body.
    @Suite("ledger serve: a batch body is streamed")
    struct BatchStreamingTests {
        static func purchase(_ n: Int) -> String {
            Fixture.purchaseLine(["paymentSeq": "\"P-\(n)\"", "transactionId": "\"T-\(n)\"", "purchaseToken": "\"tok-\(n)\""])
        }

        static func head(_ key: String, length: Int? = nil) -> String {
            "POST /v1/batch HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/x-ndjson\r\n"
                + (length.map { "Content-Length: \($0)\r\n" } ?? "Transfer-Encoding: chunked\r\n") + "\r\n"
        }

        static func count(_ server: ServerHarness, _ sql: String) throws -> Int {
            try server.database.withConnection { try $0.count(sql) }
        }

        @Test func theFirstLinesAreAppliedBeforeTheBodyHasArrived() async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                let first = (1...10).map { Self.purchase($0) + "\n" }.joined()
                let second = (11...20).map { Self.purchase($0) + "\n" }.joined()
                let connection = try RawConnection.open(port: server.port)
                #expect(await connection.send(Self.head(key, length: first.utf8.count + second.utf8.count) + first))
                var applied = 0
                for _ in 0..<200 where applied < 10 {
                    try await Task.sleep(for: .milliseconds(50))
                    applied = try Self.count(server, "SELECT count(*) FROM ledger.payments")
                }
                #expect(applied == 10, "\(applied) of the first 10 lines applied while the body was half sent")
                // Their results are already on the way, before the rest is sent.
                for _ in 0..<100 where !connection.text.contains(#""line":10,"#) {
                    _ = connection.poll()
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(connection.text.contains(#"{"line":10,"status":"recorded","paymentSeq":"P-10"}"#))
                #expect(await connection.send(second))
                let answer = try await connection.response()
                #expect(answer.status == 200)
                #expect(answer.lines == (1...20).map { #"{"line":\#($0),"status":"recorded","paymentSeq":"P-\#($0)"}"# })
                #expect(try Self.count(server, "SELECT count(*) FROM ledger.payments") == 20)
            }
        }

        /// The first line waits 3 s on a row lock while 30 MiB more of the body follows: the
        /// server stops reading meanwhile (the client's sending stalls), and a request timeout of
        /// 1 s does not cut it off, since the server was not waiting for the client.
        @Test func aBatchTheServerIsSlowToApplyIsNotCutOffByTheRequestTimeout() async throws {
            try await ServerHarness.with({ $0.requestTimeout = .seconds(1) }) { server in
                let key = try server.key(.writer)
                try server.database.withConnection { _ = try $0.ingest([Self.purchase(1)]) }
                let locker = try server.database.connect()
                defer { locker.close() }
                try locker.executeScript(unsafeSQL: "BEGIN; SELECT 1 FROM ledger.payments WHERE payment_seq = 'P-1' FOR UPDATE;")
                let consume = #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1","time":"2026-01-01T00:05:00Z"}"# + "\n"
                let tooLong = String(repeating: "x", count: 5 << 20) + "\n"
                let rest = Array((String(repeating: tooLong, count: 6) + Self.purchase(2) + "\n").utf8)
                let connection = try RawConnection.open(port: server.port)
                #expect(await connection.send(Self.head(key, length: consume.utf8.count + rest.count) + consume))
                let blocked = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                var waiting = 0
                for _ in 0..<200 where waiting == 0 {
                    try await Task.sleep(for: .milliseconds(50))
                    waiting = try locker.count(blocked)
                }
                #expect(waiting == 1, "the consume did not start before the rest of the body was sent")
                let sending = Task {
                    let start = Date()
                    let sent = await connection.send(rest)
                    return (sent, Date().timeIntervalSince(start))
                }
                try await Task.sleep(for: .seconds(3))
                try locker.executeScript(unsafeSQL: "COMMIT")
                let (sent, stalled) = await sending.value
                #expect(sent)
                #expect(stalled > 2, "the client's sending stalled \(stalled) s only: the server read on while it was busy")
                let answer = try await connection.response()
                #expect(answer.status == 200)
                let lines = answer.lines
                #expect(lines.count == 8)
                #expect(lines.first == #"{"line":1,"status":"consumed","paymentSeq":"P-1","consumedAt":"2026-01-01T00:05:00.000Z"}"#)
                #expect(lines.dropFirst().prefix(6).allSatisfy { $0.contains(#""code":"INVALID_INPUT""#) && $0.contains("over the limit") })
                #expect(lines.last == #"{"line":8,"status":"recorded","paymentSeq":"P-2"}"#)
            }
        }

        /// A body over the limit: 413 before anything runs when `Content-Length` says so; sent
        /// chunked, the lines within the limit are applied and answered, then an error line, and
        /// nothing past the limit is applied (whether the lines come one by one or at once).
        @Test func aBodyOverTheLimitIs413OrEndsWithAnErrorLine() async throws {
            try await ServerHarness.with({ $0.maxBatchBytes = 2048 }) { server in
                let key = try server.key(.writer)
                let lines = (1...12).map { Self.purchase($0) + "\n" }.joined()
                let before = try server.snapshot()
                let declared = try RawConnection.open(port: server.port)
                _ = await declared.send(Self.head(key, length: lines.utf8.count) + lines)
                let refused = try await declared.response()
                #expect(refused.status == 413 && refused.json["code"] as? String == "PAYLOAD_TOO_LARGE")
                #expect(try server.snapshot() == before)

                for (round, oneByOne) in [(0, true), (1, false)] {
                    let lines = (1...12).map { Self.purchase(round * 100 + $0) + "\n" }.joined()
                    let fit = 2048 / (Self.purchase(round * 100 + 1).utf8.count + 1)
                    let before = try Self.count(server, "SELECT count(*) FROM ledger.payments")
                    let chunked = try RawConnection.open(port: server.port)
                    _ = await chunked.send(Self.head(key))
                    if oneByOne {
                        for line in lines.split(separator: "\n") {
                            let bytes = line.utf8.count + 1
                            guard await chunked.send(String(bytes, radix: 16) + "\r\n" + line + "\n\r\n") else { break }
                            try await Task.sleep(for: .milliseconds(20))
                        }
                    } else {
                        _ = await chunked.send(String(lines.utf8.count, radix: 16) + "\r\n" + lines + "\r\n")
                    }
                    _ = await chunked.send("0\r\n\r\n")
                    let answer = try await chunked.response()
                    #expect(answer.status == 200)
                    let results = answer.lines
                    #expect(results.count == fit + 1, "\(results)")
                    #expect(results.dropLast().allSatisfy { $0.contains(#""status":"recorded""#) })
                    #expect(results.last?.hasPrefix(#"{"error":{"code":"PAYLOAD_TOO_LARGE""#) == true, "\(results.last ?? "")")
                    #expect(try Self.count(server, "SELECT count(*) FROM ledger.payments") - before == fit)
                }
            }
        }

        /// The server process's peak memory grows by far less than a 48 MiB body it is sent: it
        /// holds at most a line and a batch of it (the body here is blank lines, which run no
        /// command, and one purchase at the end).
        @Test func aBigBodyIsNotHeldInMemory() async throws {
            try await TestDatabase.with { db in
                let key = try db.withConnection { try $0.addAPIKey(role: .writer).key }
                let serve = try LedgerProcess.start(["serve", "--port", "0", "--database-url", db.conninfo])
                defer { serve.kill() }
                #expect(serve.waitForOutput(timeout: 30) { $0.contains { $0.hasPrefix("listening on http://127.0.0.1:") } })
                let port = try #require(serve.linesSoFar.first.flatMap { Int($0.split(separator: ":").last ?? "") })
                let url = "http://127.0.0.1:\(port)/v1/batch"
                let warm = try await HTTP.send("POST", url, key: key, body: Self.purchase(1) + "\n")
                #expect(warm.status == 200)
                let pid = serve.process.processIdentifier
                let peakBefore = try Self.peakMemory(pid)
                let blank = String(repeating: " ", count: 1023) + "\n"
                let body = String(repeating: blank, count: 48 * 1024) + Self.purchase(2) + "\n"
                let reply = try await HTTP.send("POST", url, key: key, body: body, headers: ["Content-Type": "application/x-ndjson"])
                #expect(reply.status == 200)
                #expect(reply.text == #"{"line":49153,"status":"recorded","paymentSeq":"P-2"}"# + "\n")
                let grown = try Self.peakMemory(pid) - peakBefore
                #expect(grown < 24 << 20, "the peak memory grew by \(grown >> 20) MiB for a 48 MiB body")
            }
        }

        /// `VmHWM` of /proc/PID/status: the process's peak resident memory, in bytes.
        static func peakMemory(_ pid: Int32) throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
            let kilobytes = try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
            return kilobytes * 1024
        }
    }
}
